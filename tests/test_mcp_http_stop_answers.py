"""A stopping HTTP server ends its event streams when the last answer has been written
(:class:`~octomem.mcp_server.open_answers.OpenAnswers`), not a fixed second after its
calls return (the wait h22fix's G7 left: 1 s on every stop, and an answer still being
written after that second was cut).

A real uvicorn server and HTTP client: the served answer is written in two parts with a
gate between them, the server is told to stop between the parts, and its streams stay
open past the old second until the gate opens; a client's standalone ``GET`` stream is
not waited for.
"""

from __future__ import annotations

from typing import Any

import anyio
import httpx2
import pytest
import uvicorn
from sse_starlette.sse import AppStatus

from octomem.mcp_server.http import end_streams_when_answered
from octomem.mcp_server.open_answers import OpenAnswers
from octomem.mcp_server.stopping import RunningCalls

#: Bound on waits (a hang guard on a loaded machine, not a speed target), seconds.
LIMIT_S = 60.0
#: Longer than the fixed grace the stop used to give the answers (1 s).
PAST_THE_OLD_GRACE_S = 1.5


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class GatedApp:
    """An ASGI app answering ``POST`` in two parts, the second once ``rest`` is set, and
    holding a ``GET`` event stream open until ``AppStatus.should_exit``."""

    def __init__(self) -> None:
        self.rest = anyio.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/plain")]})
        if scope["method"] == "GET":
            await send({"type": "http.response.body", "body": b"stream\n", "more_body": True})
            while not AppStatus.should_exit:
                await anyio.sleep(0.02)
            await send({"type": "http.response.body", "body": b""})
            return
        await send({"type": "http.response.body", "body": b"first ", "more_body": True})
        await self.rest.wait()
        await send({"type": "http.response.body", "body": b"last"})


@pytest.mark.anyio
async def test_the_streams_end_once_the_last_answer_is_written() -> None:
    app = GatedApp()
    answers = OpenAnswers(app)
    runner = uvicorn.Server(uvicorn.Config(answers, host="127.0.0.1", port=0, log_config=None,
                                           lifespan="off"))
    AppStatus.should_exit = False
    stopped = anyio.Event()

    async def stop_when_answered() -> None:
        await end_streams_when_answered(runner, RunningCalls(), answers)
        stopped.set()

    try:
        with anyio.fail_after(LIMIT_S):
            async with anyio.create_task_group() as group:
                group.start_soon(runner.serve)
                group.start_soon(stop_when_answered)
                while not runner.started:
                    await anyio.sleep(0.02)
                url = f"http://127.0.0.1:{runner.servers[0].sockets[0].getsockname()[1]}/"
                async with httpx2.AsyncClient(timeout=LIMIT_S) as http, \
                        http.stream("GET", url) as stream, http.stream("POST", url) as answer:
                    parts = answer.aiter_raw()
                    assert await anext(parts) == b"first "
                    assert answers.open == 1  # the POST; the GET stream is not counted
                    runner.should_exit = True  # what the first SIGTERM does
                    await anyio.sleep(PAST_THE_OLD_GRACE_S)
                    assert not stopped.is_set() and not AppStatus.should_exit
                    app.rest.set()
                    assert b"".join([part async for part in parts]) == b"last"
                    await stopped.wait()  # the GET stream still open: not waited for
                    assert AppStatus.should_exit and answers.open == 0
                    assert await stream.aread() == b"stream\n"
    finally:
        AppStatus.should_exit = False
