"""A client that ends its session while a notification it sent is being delivered: one
INFO line, no traceback (trial 19 K4).

The SDK's streamable-HTTP transport (``mcp`` 2.3.0,
``StreamableHTTPServerTransport._handle_post_request``) answers a notification ``202``
first and only then hands it to the session. A client cancelled mid-call sends
``notifications/cancelled`` and ends its session (``DELETE``) at once, on two
connections; when the ``DELETE`` closes the session's streams between the two steps, the
hand-over raises :class:`anyio.ClosedResourceError` (or
:class:`~anyio.BrokenResourceError`), the SDK logs ``Error handling POST request`` with
a traceback and sends a ``500`` after its complete ``202``, and uvicorn logs
``Exception in ASGI application ... after response already completed``: about 100 lines
of tracebacks for a user closing a window, with nothing wrong and nothing lost (the
session, and the call the notification was about, had ended anyway).

:class:`ClientGoneAnswer` sits right around the SDK's app: once a request's answer is
complete it sends nothing more for that request, and the stream-closed error that then
ends the SDK's handler is one INFO line (:data:`GONE_LINE`). :class:`ClientGoneFilter`,
on the SDK's logger, drops the SDK's own ``Error handling POST request`` record for the
same case: a stream-closed error of a request whose answer was complete. Any other error
is logged and answered as before.
"""

from __future__ import annotations

import contextvars
import logging
from typing import Any

import anyio

log = logging.getLogger(__name__)

#: The SDK's logger whose record :class:`ClientGoneFilter` drops, and that record's message.
SDK_LOGGER = "mcp.server.streamable_http"
SDK_MESSAGE = "Error handling POST request"
#: The errors of a memory stream closed under its sender: the session ended.
STREAM_CLOSED = (anyio.ClosedResourceError, anyio.BrokenResourceError)
#: The line logged instead (INFO; ``%s``: the HTTP method and path).
GONE_LINE = ("a client went away: its session ended while a message it had sent (%s, "
             "already answered) was being delivered; nothing lost")

#: Per request: whether its answer is complete (a one-item list, set by
#: :class:`ClientGoneAnswer`; ``None`` outside a request it serves).
_ANSWERED: contextvars.ContextVar[list[bool] | None] = contextvars.ContextVar(
    "octomem_http_answered", default=None)


def _answer_complete() -> bool:
    state = _ANSWERED.get()
    return bool(state and state[0])


class ClientGoneFilter(logging.Filter):
    """Drop the SDK's ``Error handling POST request`` record when its error is a closed
    stream (:data:`STREAM_CLOSED`) and the request's answer was already complete;
    pass every other record."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Return False for the record described above, True otherwise."""
        error = record.exc_info[1] if record.exc_info else None
        return not (record.msg == SDK_MESSAGE and isinstance(error, STREAM_CLOSED)
                    and _answer_complete())


def quiet_gone_clients() -> None:
    """Put :class:`ClientGoneFilter` on the SDK's logger (:data:`SDK_LOGGER`), once."""
    sdk = logging.getLogger(SDK_LOGGER)
    if not any(isinstance(f, ClientGoneFilter) for f in sdk.filters):
        sdk.addFilter(ClientGoneFilter())


class ClientGoneAnswer:
    """ASGI middleware: after a request's answer is complete, send nothing more for it, and
    end a stream-closed error (:data:`STREAM_CLOSED`) raised after that with one INFO line
    (:data:`GONE_LINE`) instead of a traceback. Errors before the answer is complete, and
    any other error, pass through unchanged.

    :param app: the SDK's streamable-HTTP app.
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Pass the request on, as described above."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        answered = [False]
        late: list[str] = []

        async def answer(message: dict[str, Any]) -> None:
            if answered[0]:  # uvicorn would raise "after response already completed"
                late.append(message["type"])
                return
            if message["type"] == "http.response.body" and not message.get("more_body"):
                answered[0] = True
            await send(message)

        token = _ANSWERED.set(answered)
        try:
            await self.app(scope, receive, answer)
        except STREAM_CLOSED:
            if not answered[0]:
                raise
            log.info(GONE_LINE, f"{scope.get('method')} {scope.get('path')}")
        finally:
            _ANSWERED.reset(token)
        if late:
            log.debug("not sent after a complete answer: %s", ", ".join(late))
