"""MCP over stdio, where every request gets an answer: invalid Unicode included.

The SDK's stdio transport parses each line with pydantic, whose JSON parser refuses a
string holding a lone UTF-16 surrogate (``"\\ud800"``, legal JSON text but no Unicode
character). The transport hands the parse error on as an exception, which the session
drops, so the client waited for its own timeout. Here such an item is answered: the
line is read again with Python's :mod:`json` (which keeps lone surrogates), and the
request gets a JSON-RPC error with its own id (``-32602`` invalid params, naming where
the bad string is); a line that is not JSON at all gets ``-32700`` parse error with id
``null``, as JSON-RPC 2.0 prescribes.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Sequence
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
)
from pydantic import ValidationError

from .stopping import RunningCalls

log = logging.getLogger(__name__)


def _surrogate_at(value: Any, where: str) -> str | None:
    """Return the path of the first string in ``value`` holding a lone surrogate."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return where
        return None
    items = value.items() if isinstance(value, dict) else enumerate(value) \
        if isinstance(value, list) else ()
    for key, item in items:
        if isinstance(key, str) and _surrogate_at(key, where) is not None:
            return f"{where} (a key)"
        found = _surrogate_at(item, f"{where}.{key}" if isinstance(key, str) else f"{where}[{key}]")
        if found is not None:
            return found
    return None


def refusal(error: Exception) -> JSONRPCError | None:
    """Return the JSON-RPC error answering a line the transport could not parse.

    :param error: what the SDK's stdio transport yielded instead of a message.
    :returns: the error reply, or ``None`` when there is nobody to answer (a
        notification, a response, or an exception that is not a parse failure).
    """
    if not isinstance(error, ValidationError):
        return None
    errors = error.errors()
    line = next((e.get("input") for e in errors if isinstance(e.get("input"), str)), None)
    if line is None:  # JSON, but no JSON-RPC message: the errors hold what was parsed
        return _unlike_a_message(errors)
    try:
        message = json.loads(line)
    except ValueError:
        return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(
            code=PARSE_ERROR, message="Parse error: the line is not JSON"))
    return answer_to(message)


#: JSON's names for the types a value may have, as a message names what was sent.
_JSON_TYPES = ((bool, "true or false"), (str, "a string"), (int | float, "a number"),
               (list, "an array"), (dict, "an object"), (type(None), "null"))


def _json_type(value: Any) -> str:
    return next((name for kind, name in _JSON_TYPES if isinstance(value, kind)), "a value")


def _unlike_a_message(errors: Sequence[Any]) -> JSONRPCError | None:
    """Answer a line that is JSON but not a JSON-RPC message (trial 16 F10: both got no
    answer at all, so the client waited for its timeout): a batch (a JSON array; MCP has
    none since 2025-06-18) gets ``-32600`` with id ``null``, a request whose ``params``
    is not an object ``-32602`` with its id, naming the field. ``None`` for anything
    else (a notification, a response: nobody to answer)."""
    roots = [e.get("input") for e in errors if len(e.get("loc", ())) == 1]
    if any(isinstance(r, list) for r in roots):
        return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(
            code=INVALID_REQUEST, message="Invalid Request: a batch (a JSON array of "
            "messages) is not part of MCP; send each request as a line of its own"))
    message = next((r for r in roots if isinstance(r, dict) and "method" in r), None)
    if message is None:
        message = next((e.get("input") for e in errors if isinstance(e.get("input"), dict)
                        and "method" in e["input"]), None)
    wrong = next((e for e in errors if e.get("loc", ())[:1] == ("JSONRPCRequest",)
                  and len(e["loc"]) > 1), None)
    if message is None or wrong is None:
        return answer_to(message)
    field = ".".join(str(p) for p in wrong["loc"][1:])
    expected = "an object" if wrong.get("type") in ("dict_type", "model_type") else None
    reason = (f"{field}: must be {expected}, got {_json_type(wrong.get('input'))}"
              if expected else f"{field}: {wrong.get('msg', 'does not match the MCP schema')}")
    return answer_to(message, reason=reason)


def answer_to(message: Any, surrogates_only: bool = False,
              reason: str | None = None) -> JSONRPCError | None:
    """Return the ``-32602`` error answering a request (parsed with :mod:`json`) the SDK
    could not read, with the request's id, naming where a lone surrogate is.

    :param message: the request as :func:`json.loads` read it.
    :param surrogates_only: answer only when a string holds a lone surrogate (else the
        message is "the request does not match the MCP schema").
    :param reason: what is wrong when no string holds a lone surrogate (default: "the
        request does not match the MCP schema").
    :returns: the error, or ``None`` for a notification, a response or not a request.
    """
    if not isinstance(message, dict) or "method" not in message:
        return None
    request_id = message.get("id")
    if not isinstance(request_id, str | int) or isinstance(request_id, bool):
        return None  # a notification: JSON-RPC answers none
    where = _surrogate_at(message.get("params"), "params")
    if where is None:
        if surrogates_only:
            return None
        reason = reason or "the request does not match the MCP schema"
    else:
        reason = (f"{where.removeprefix('params.')}: invalid Unicode (a lone surrogate "
                  "escape such as \\ud800); send UTF-8 text")
    return JSONRPCError(jsonrpc="2.0", id=request_id,
                        error=ErrorData(code=INVALID_PARAMS, message=reason))


async def run_stdio(server: MCPServer) -> None:
    """Serve ``server`` over this process's stdin/stdout until stdin closes.

    Like ``server.run("stdio")``, with the lines the SDK cannot parse answered by
    :func:`refusal` instead of dropped, and the requests read before stdin closed
    answered before the server stops: the SDK cancels its calls in flight at end of
    input, so a client that wrote five ``remember`` calls and closed stdin got
    "Connection closed" for each, although one of them was stored (trial 17 G7). At the
    close the running writes are asked to stop early and one stderr line says what is
    awaited (:mod:`.stopping`).
    """
    lowlevel = server._lowlevel_server  # noqa: SLF001 - the SDK's run_stdio_async does this
    running: RunningCalls = getattr(server, "running", None) or RunningCalls()
    unanswered: set[Any] = set()
    async with stdio_server() as (read_stream, write_stream):
        send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        out_send, out_receive = anyio.create_memory_object_stream[SessionMessage](0)

        async def screen() -> None:
            async with send:
                async for item in read_stream:
                    reply = refusal(item) if isinstance(item, Exception) else None
                    if reply is None:
                        if isinstance(item, SessionMessage) and \
                                isinstance(item.message, JSONRPCRequest):
                            unanswered.add(item.message.id)
                        await send.send(item)
                        continue
                    log.info("refused a request the transport could not parse: %s",
                             reply.error.message)
                    try:
                        await write_stream.send(SessionMessage(reply))
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        return
                await _answer_first(running, unanswered)

        async def relay() -> None:  # the server's messages to stdout, answers noted
            async with out_receive, write_stream:  # closing it ends the stdout writer
                async for message in out_receive:
                    try:
                        await write_stream.send(message)
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        return
                    # answered once the stdout writer holds it (it writes what it holds
                    # before it ends): noted before, the end of input could cancel this
                    # send, and a pipelined call's answer was lost (CI, load ~3)
                    if isinstance(message.message, JSONRPCResponse | JSONRPCError):
                        unanswered.discard(message.message.id)

        async with anyio.create_task_group() as group:
            group.start_soon(screen)
            group.start_soon(relay)
            await lowlevel.run(receive, out_send, lowlevel.create_initialization_options())
            group.cancel_scope.cancel()


#: How often the end of input looks whether every request has been answered (seconds).
ANSWERED_POLL_S = 0.02


async def _answer_first(running: RunningCalls, unanswered: set[Any]) -> None:
    """At the end of input: ask the running writes to stop early, say on stderr what is
    awaited, and return once every request read has been answered."""
    line = running.request_stop("stdin closed", len(unanswered), again=False)
    if not unanswered:
        return
    if line is not None:
        print(f"octomem: {line}", file=sys.stderr, flush=True)
    while unanswered:
        await anyio.sleep(ANSWERED_POLL_S)
