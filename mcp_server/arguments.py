"""Strict tool arguments: what a caller sends is checked before a tool runs.

The SDK validates tool arguments laxly: unknown names are dropped (``recall(kind=...)``
returned unfiltered hits; ``remember(id=...)`` stored under a new id), ``true`` passes as
the integer 1 and ``"yes"`` as a boolean, and its errors are several lines of pydantic
text with a URL. Here every call is checked first against the tool's own signature:

- an unknown argument is refused, naming it, the closest real one and all of them;
- values are validated in pydantic's strict mode (no bool -> int, no str -> bool or
  int, no float -> int), after the SDK's own pre-parsing of lists and objects sent as
  JSON text (some clients do that), which is kept;
- the error is one line naming the argument: ``top_k: must be an integer or null, got
  true``.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata, func_metadata
from pydantic import ValidationError

from .observe import refuse
from .ordering import READ_TOOLS, SessionOrders, session_of
from .stdio import run_stdio
from .stopping import RunningCalls

#: Longest rendering of a refused value in an error message (characters).
MAX_SHOWN = 60


def _shown(value: Any) -> str:
    """Render a refused value as JSON would show it, cut to :data:`MAX_SHOWN` characters."""
    text = {True: "true", False: "false", None: "null"}.get(value, None) \
        if isinstance(value, bool | type(None)) else None
    if text is None:
        text = repr(value)
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "…"


def _argument(loc: tuple[Any, ...]) -> str:
    """``('tags', 0)`` -> ``tags[0]``."""
    name = str(loc[0]) if loc else "arguments"
    return name + "".join(f"[{part}]" if isinstance(part, int) else f".{part}"
                          for part in loc[1:])


def _reason(error: Mapping[str, Any]) -> str:
    """Pydantic's message for one error, phrased as a rule about the argument."""
    message = str(error.get("msg", "is not valid"))
    if error.get("type") == "missing":
        return "required"
    for prefix, replacement in (("Input should be", "must be"), ("Value error, ", "")):
        if message.startswith(prefix):
            message = replacement + message[len(prefix):]
    return message


class StrictArguments:
    """The argument rules of one tool function (its signature, as the SDK reads it).

    :param fn: the tool function; its parameters are the tool's arguments.
    :param tool: the tool's name, for messages.
    """

    def __init__(self, fn: Callable[..., Any], tool: str) -> None:
        self.tool = tool
        self.meta: FuncMetadata = func_metadata(fn)
        fields = self.meta.arg_model.model_fields
        self.names = [field.alias or name for name, field in fields.items()]

    def check(self, arguments: Mapping[str, Any]) -> None:
        """Refuse unknown names and values of the wrong type.

        :param arguments: the ``arguments`` object of a ``tools/call``.
        :raises ToolError: one line naming the first bad argument.
        """
        for key in arguments:
            if key not in self.names:
                raise ToolError(self._unknown(key))
        parsed = self.meta.pre_parse_json(dict(arguments))
        try:
            self.meta.arg_model.model_validate(parsed, strict=True)
        except ValidationError as exc:
            error = exc.errors()[0]
            argument = _argument(tuple(error.get("loc", ())))
            got = "" if error.get("type") == "missing" else f", got {_shown(error.get('input'))}"
            raise ToolError(f"{argument}: {_reason(error)}{got}") from None

    def _unknown(self, key: str) -> str:
        close = difflib.get_close_matches(key, self.names, n=1, cutoff=0.75)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        takes = ", ".join(self.names) or "no arguments"
        return f"{_shown(key)}: {self.tool} has no such argument{hint} ({self.tool} takes {takes})"


class StrictServer(MCPServer):
    """An :class:`MCPServer` that checks every tool call with :class:`StrictArguments` first.

    Tools added with :meth:`add_strict_tool` are checked; their advertised input schemas
    say ``additionalProperties: false``. Tool calls and resource reads run in the order
    they arrived within their MCP session (:mod:`.ordering`): writes one at a time, reads
    beside other reads; another session's calls do not wait for them.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.argument_rules: dict[str, StrictArguments] = {}
        self.order = SessionOrders()
        #: the tool calls running, for a stop that waits for them (:mod:`.stopping`)
        self.running = RunningCalls()

    def add_strict_tool(self, fn: Callable[..., Any], name: str, **kwargs: Any) -> None:
        """Add ``fn`` as the tool ``name`` (``kwargs`` as for ``add_tool``), checked strictly."""
        self.add_tool(fn, name=name, **kwargs)
        self.argument_rules[name] = StrictArguments(fn, name)

    async def run_stdio_async(self) -> None:
        """Serve over stdio, answering lines the SDK cannot parse (:mod:`.stdio`)."""
        await run_stdio(self)

    async def list_tools(self) -> list[Any]:
        """The tools, each strict tool's schema closed to other argument names and without
        the titles pydantic derives from the argument names (``"title": "Top K"`` for
        ``top_k``: ~11 % of the schemas' characters, in every agent's context)."""
        tools = await super().list_tools()
        for tool in tools:
            if tool.name in self.argument_rules:
                tool.input_schema["additionalProperties"] = False
                tool.input_schema.pop("title", None)
                for prop in tool.input_schema.get("properties", {}).values():
                    prop.pop("title", None)
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Check the arguments of a strict tool, then call it as the SDK does.

        :raises ToolError: ``Error executing tool NAME: ARGUMENT: why`` (one line).
        """
        rules = self.argument_rules.get(name)
        if rules is not None:
            try:
                rules.check(arguments)
            except ToolError as exc:
                refuse()  # counted as invalid: the tool did not run
                raise ToolError(f"Error executing tool {name}: {exc}") from None
        async with self.order.turn(session_of(context), write=name not in READ_TOOLS):
            return await super().call_tool(name, arguments, context)

    async def read_resource(self, uri: Any, context: Any = None) -> Any:
        """Read a resource after every write of its session that arrived before it
        (:mod:`.ordering`)."""
        async with self.order.turn(session_of(context), write=False):
            return await super().read_resource(uri, context)
