"""The HTTP answers a stopping server still writes, so it ends its streams once they are out.

A tool call over streamable HTTP is a ``POST`` whose answer is written on that request's
own response (an event stream, or JSON). A server being stopped (:mod:`.stopping`) ends
every open event stream once its calls are answered (:func:`.http.end_streams_when_answered`);
ending them while an answer is still being written would lose it. :class:`OpenAnswers`
counts those requests and wakes whoever waits the moment the last one has been written,
instead of a fixed grace period after the calls return (which was 1 s every stop).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import anyio


class OpenAnswers:
    """ASGI middleware: count the HTTP requests whose answer is still being written.

    Every HTTP request but ``GET`` counts (a ``GET`` is a client's standalone event stream,
    open for the whole session; it is what the stopping server ends) from when it reaches
    the app until the app returns, which the SDK's transport does once the answer's last
    byte was handed to the server. Lifespan events pass through uncounted.

    :param app: the ASGI app whose answers are counted.
    """

    def __init__(self, app: Any) -> None:
        self.app = app
        self.open = 0
        self._written: anyio.Event | None = None
        #: when a counted request last came or was answered (``time.monotonic``)
        self.last = time.monotonic()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Pass the request to the app, counting it while it runs."""
        if scope["type"] != "http" or scope.get("method") == "GET":
            await self.app(scope, receive, send)
            return
        self.open += 1
        self.last = time.monotonic()
        try:
            await self.app(scope, receive, send)
        finally:
            self.open -= 1
            self.last = time.monotonic()
            if not self.open and self._written is not None:
                self._written.set()
                self._written = None

    async def written(self) -> None:
        """Return once no counted request is open (at once when none is)."""
        while self.open:
            if self._written is None:
                self._written = anyio.Event()
            await self._written.wait()

    async def quiet(self, quiet_s: float, limit_s: float, done: Callable[[], bool]) -> None:
        """Return once no counted request is open and none came or was answered for
        ``quiet_s`` seconds, once ``done()`` is true, or after ``limit_s`` at most."""
        with anyio.move_on_after(limit_s):
            while not done():
                idle = time.monotonic() - self.last
                if not self.open and idle >= quiet_s:
                    return
                await anyio.sleep(max(0.02, min(quiet_s - idle, 0.1)))
