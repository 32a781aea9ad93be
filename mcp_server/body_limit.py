"""The largest MCP request over HTTP, derived from the limits settings, and its refusal.

The ``mcp`` SDK refuses a request body over ``max_request_body_size`` (4 MiB unless given,
``mcp.server.transport_security.DEFAULT_MAX_REQUEST_BODY_SIZE``) with a bare ``413`` in
plain text, before octomem sees it: an ``ingest`` text of 5 MB, well within
``limits.file_bytes`` (10 MB), failed with "Server returned an error response" (trial 12).
So the body limit follows the settings (:func:`body_limit`), and :class:`BodyLimitAnswer`
turns the SDK's ``413`` into a JSON-RPC error whose one line names the setting (the SDK's
client surfaces a JSON-RPC error sent at any HTTP status).
"""

from __future__ import annotations

import json
from typing import Any

#: Bytes a character can take in JSON text: a control character is ``\\u0001`` (6 bytes
#: for 1 UTF-8 byte, the worst ratio per byte); a character outside the BMP, escaped by a
#: client that writes ASCII only, is a surrogate pair ``\\ud83d\\ude00`` (12 bytes).
ESCAPED_PER_BYTE = 6
ESCAPED_PER_CHAR = 12
#: Room for the rest of a request: JSON-RPC envelope, tool name, the other arguments
#: (title, uri, tags), ``_meta``.
ENVELOPE_BYTES = 64 * 1024


def body_limit(limits: Any) -> tuple[int, str]:
    """Return the largest request body (bytes) that must be read, one holding any text the
    limits let through however it is escaped, and the setting it follows.

    ``max(6 x limits.file_bytes, 12 x limits.remember_chars, 12 x limits.query_chars)
    + 64 KiB``; with the defaults ``6 x 10,000,000 + 65,536 = 60,065,536`` bytes, following
    ``limits.file_bytes``.

    :param limits: the ``limits`` settings
        (:class:`~octomem.engine.settings_schema.LimitsSettings`).
    """
    terms = [(ESCAPED_PER_BYTE * limits.file_bytes, "6 x limits.file_bytes"),
             (ESCAPED_PER_CHAR * limits.remember_chars, "12 x limits.remember_chars"),
             (ESCAPED_PER_CHAR * limits.query_chars, "12 x limits.query_chars")]
    size, term = max(terms, key=lambda t: t[0])
    return size + ENVELOPE_BYTES, term


#: :func:`body_limit` of the default settings, for callers without settings at hand.
DEFAULT_BODY_LIMIT = (ESCAPED_PER_BYTE * 10_000_000 + ENVELOPE_BYTES, "6 x limits.file_bytes")


def refusal(limit: tuple[int, str], size: int | None) -> str:
    """The one line a client gets for a body over ``limit`` (:func:`body_limit`; ``size``:
    the body's declared length, when it had one)."""
    what = f"{size:,} bytes" if size is not None else "the request body"
    setting = limit[1].split(" x ")[1]
    return (f"request too large: {what} is more than the {limit[0]:,} bytes a request may "
            f"have over HTTP ({limit[1]} + 64 KiB: any text the limits allow, JSON-escaped)"
            f"; ingest a large file by its path, or raise {setting}")


class BodyLimitAnswer:
    """ASGI middleware: answer the SDK's ``413 Request body too large`` with a JSON-RPC error
    (``-32600``, ``id: null``) carrying :func:`refusal`, status 413 kept.

    :param app: the SDK's streamable-HTTP app, built with ``max_request_body_size`` the
        first item of ``limit``.
    :param limit: that same limit, bytes, and the setting it follows (:func:`body_limit`).
    """

    def __init__(self, app: Any, limit: tuple[int, str]) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Pass the request on; replace a 413 answer (start and body) with the refusal."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = next((v for k, v in scope.get("headers", ()) if k == b"content-length"), b"")
        size = int(declared) if declared.isdigit() else None
        replaced = False

        async def answer(message: dict[str, Any]) -> None:
            nonlocal replaced
            if message["type"] == "http.response.start" and message.get("status") == 413:
                replaced = True
                body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
                    "code": -32600, "message": refusal(self.limit, size)}}).encode()
                await send({"type": "http.response.start", "status": 413, "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
            elif not replaced:
                await send(message)

        await self.app(scope, receive, answer)
