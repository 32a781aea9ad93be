"""What a stopping HTTP server still answers while it finishes its running calls.

A server asked to stop (SIGTERM, Ctrl-C: :mod:`.stopping`) while tool calls run keeps
listening until their answers are written, so that what a client asks right after its
answer still reaches it: the SDK 2.x client, given a tool's result, sends ``tools/list``
to learn the tool's output schema when it has not listed the tools yet, and its call
then failed with ``httpx.ConnectError`` once the server had stopped listening (trial 21
F2: the "stopped early" answer of an ``ingest`` was lost). Meanwhile
:class:`StoppingGate` lets through only what starts no work: the listings, ``ping``,
notifications (``notifications/cancelled``), and a session's ``GET`` stream or
``DELETE``; anything else (``tools/call``, ``initialize``, ``resources/read``, ...) is
answered ``503`` with a JSON-RPC error saying the server is stopping. The server stops
listening once no such request came for :data:`QUIET_S` after the last answer
(:func:`.http.end_streams_when_answered`).
"""

from __future__ import annotations

import json
from typing import Any

#: JSON-RPC methods a stopping server still answers: cheap, read-only, start no work.
STILL_ANSWERED = frozenset({"tools/list", "resources/list", "resources/templates/list",
                            "prompts/list", "ping"})
#: The largest request body a stopping server looks at; a listing is far smaller, so a
#: larger body is refused unread.
LOOKED_AT_BYTES = 64 * 1024
#: The HTTP status of a refused request.
STOPPING_STATUS = 503
#: JSON-RPC error code of a refused request (implementation-defined server error).
STOPPING_CODE = -32000
REFUSAL = "the server is stopping: it answers the calls already running, and no new ones"


def still_answered(body: bytes) -> bool:
    """Whether a stopping server passes on the JSON-RPC request (or batch) ``body``:
    every message in it is a notification or a request of :data:`STILL_ANSWERED`."""
    try:
        parsed = json.loads(body)
    except ValueError:
        return False
    messages = parsed if isinstance(parsed, list) else [parsed]
    return bool(messages) and all(
        isinstance(m, dict) and isinstance(m.get("method"), str)
        and (m["method"] in STILL_ANSWERED
             or ("id" not in m and m["method"].startswith("notifications/")))
        for m in messages)


def _request_id(body: bytes) -> Any:
    try:
        parsed = json.loads(body)
    except ValueError:
        return None
    return parsed.get("id") if isinstance(parsed, dict) else None


class StoppingGate:
    """ASGI middleware: once :attr:`stopping`, pass on only the requests a stopping server
    still answers (module doc); refuse the others with ``503`` and a JSON-RPC error.

    :param app: the SDK's streamable-HTTP app (or a middleware around it).
    """

    def __init__(self, app: Any) -> None:
        self.app = app
        #: set when the server starts stopping (:class:`.http.StoppingServer`)
        self.stopping = False

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Pass the request on, or refuse it while the server is stopping."""
        if not self.stopping or scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size, more = 0, True
        while more and size <= LOOKED_AT_BYTES:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if more or not still_answered(body):
            await _refuse(send, None if more else _request_id(body))
            return
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return dict(await receive())

        await self.app(scope, replay, send)


async def _refuse(send: Any, request_id: Any) -> None:
    reply = json.dumps({"jsonrpc": "2.0", "id": request_id,
                        "error": {"code": STOPPING_CODE, "message": REFUSAL}}).encode()
    await send({"type": "http.response.start", "status": STOPPING_STATUS,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(reply)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": reply})
