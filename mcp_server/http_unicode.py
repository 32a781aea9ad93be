"""MCP over HTTP answers invalid Unicode as stdio does (:mod:`.stdio`; trial 12 F9).

The SDK's streamable-HTTP transport parses a POST body with pydantic, whose JSON parser
refuses a string holding a lone UTF-16 surrogate (``"\\ud800"``, legal JSON text but no
Unicode character), and answers ``400`` with ``-32700`` parse error and ``id: null``: the
client cannot match it to its request, and the message names a column, not the argument.
:class:`SurrogateAnswer` reads such a body again with Python's :mod:`json` (which keeps
lone surrogates) and, for a request, answers the ``-32602`` error stdio gives, with the
request's id and naming where the bad string is (status ``400`` kept: the SDK's client
surfaces a JSON-RPC error at any status). Every check the SDK makes before it parses
(``Host``, ``Origin``, ``Accept``, ``Content-Type``, the body limit, the session) stays
the SDK's: only its parse-error answer is replaced.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from .stdio import answer_to

log = logging.getLogger(__name__)

#: The status and JSON-RPC code of the SDK's answer to a body it cannot parse.
PARSE_ERROR_STATUS, PARSE_ERROR_CODE = 400, -32700


def reply_for(body: bytes) -> bytes | None:
    """Return the JSON of the ``-32602`` error answering ``body`` when it is a request
    whose strings hold a lone surrogate, else ``None`` (the SDK's answer stands)."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):  # not JSON at all (or not UTF-8), or nested
        return None  # deeper than Python's json reads (trial 13 M14): a parse error it is
    reply = answer_to(message, surrogates_only=True)
    return None if reply is None else reply.model_dump_json(by_alias=True,
                                                            exclude_unset=True).encode()


class SurrogateAnswer:
    """ASGI middleware: replace the SDK's parse-error answer to a request holding a lone
    surrogate with :func:`reply_for`'s error (its id, the argument named).

    The request body is kept as the SDK reads it (no more than the body limit lets
    through) until the answer starts; only a ``400`` is looked at.

    :param app: the SDK's streamable-HTTP app (or a middleware around it).
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Pass the request on, answering a lone surrogate's parse error as stdio does."""
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        held: dict[str, Any] | None = None
        replaced = False

        async def reading() -> dict[str, Any]:
            message: dict[str, Any] = await receive()
            if message["type"] == "http.request":
                chunks.append(message.get("body", b""))
            return message

        async def answer(message: dict[str, Any]) -> None:
            nonlocal held, replaced
            if message["type"] == "http.response.start":
                if message.get("status") == PARSE_ERROR_STATUS:
                    held = message  # decided on when its body comes
                    return
                chunks.clear()
            elif message["type"] == "http.response.body" and held is not None:
                start, held = held, None
                reply = _parse_error_reply(message.get("body", b""), b"".join(chunks))
                chunks.clear()
                if reply is not None:
                    replaced = True
                    log.info("refused a request holding a lone surrogate: %s", reply[:200])
                    headers = [(k, v) for k, v in start.get("headers", ())
                               if k.lower() != b"content-length"]
                    await send({**start, "headers": [
                        *headers, (b"content-length", str(len(reply)).encode())]})
                    await send({"type": "http.response.body", "body": reply})
                    return
                await send(start)
            elif replaced:
                return
            await send(message)

        await self.app(scope, reading, answer)


def _parse_error_reply(answered: bytes, body: bytes) -> bytes | None:
    """Return :func:`reply_for` ``body`` when the SDK's answer ``answered`` is a parse
    error (``-32700``), else ``None``."""
    try:
        code = json.loads(answered).get("error", {}).get("code")
    except (ValueError, AttributeError):
        return None
    return reply_for(body) if code == PARSE_ERROR_CODE else None
