"""How the command line's options read in ``--help``: flags as flags, values by name.

typer 0.29's help shows every option's Python type — ``--json <bool>``, ``--help <bool>``,
``--kind <list[str]>`` — which reads as if a flag took a value. The command classes
here give each parameter a metavar before help is drawn: none for a flag (``--json``),
the option's name in capitals for a value (``--kind KIND``, repeatable ones too), unless
the option names its own (``--top-k N``); an argument shows its name only (``QUERY``,
not ``QUERY <str>``), and the usage line writes it as click and man pages do: ``QUERY``
when required, ``[PATHS]...`` when not (typer 0.29 writes ``{QUERY}``). Tested with typer
0.25-0.29 (the older ones already showed flags bare).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

from .usage import UsageError, with_context

#: Exit status after Ctrl-C (128 + SIGINT, the shell's convention).
INTERRUPTED = 130
#: What Ctrl-C says when an ingest stored nothing (before its first batch committed; the
#: store it was creating, if any, is deleted: trial 16 F4).
NOTHING_STORED = "interrupted before anything was stored"

#: Metavars chosen by option name where the name in capitals would not read well.
METAVARS = {"top_k": "N", "set_": "KEY=VALUE", "config": "FILE", "data_dir": "DIR",
            "project_root": "DIR", "global_root": "DIR", "beir": "DIR", "as_of": "DATE",
            "since": "DATE", "until": "DATE", "event_time": "DATE", "fmt": "FORMAT",
            "cache_dir": "DIR", "out": "DIR", "sources": "DIR", "limit": "N",
            "group_by": "metadata.FIELD", "supersedes": "ID", "combo": "NAME=ARMS",
            "port": "PORT", "ui_port": "PORT", "ui_host": "HOST", "context": "N",
            "max_tokens": "N", "max_bytes": "N", "lines": "N", "per": "UNIT",
            "reason": "TEXT", "embedder": "NAME", "log_format": "FORMAT", "log_level": "LEVEL",
            "synthetic": "SIZES", "save_runs": "DIR", "query_filter": "metadata.FIELD=VALUES"}


def natural_metavars(params: list[Any]) -> list[Any]:
    """Give each of ``params`` (click parameters) the metavar its help should show.

    :returns: ``params``, changed in place.
    """
    for param in params:
        if param.param_type_name == "option" and (param.is_flag or param.count):
            param.metavar = ""
        elif param.metavar is None and param.name:
            param.metavar = METAVARS.get(param.name, param.name.upper())
        if param.param_type_name == "argument" and hasattr(param, "display_type_rich"):
            param.display_type_rich = _no_type  # typer 0.29 shows ``PATHS <list[Path]>``
    return params


def _no_type(ctx: Any = None) -> None:
    return None


class DeferredCoercion:
    """typer 0.29's coercion of one parameter's value, built on the first value given.

    typer builds a pydantic ``TypeAdapter`` for every parameter it processes, even one
    left unset (``None``), so naming any command imported pydantic (~0.1-0.3 s) to
    coerce the group's unset ``--config``. An unset value is returned as typer's own
    coercion returns it (``None``, or ``()`` for a repeatable option); a value that
    already has the plain type the parameter declares (``str``, ``int``, ``float``, with
    no parser, bounds or choices: a command line's text for a ``str``, a default) is
    returned as it is, which is what typer's adapter returns for it; anything else is
    handed to typer's coercion, built then (``typer._coercion.RuntimeParam.coerce``).
    """

    #: Types whose values typer's adapters return unchanged when already of that type.
    PLAIN = (str, int, float)

    def __init__(self, param: Any) -> None:
        self.param = param
        self.built: Any = None

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        """Coerce ``value`` as typer would: unset stays unset, anything else goes to
        typer's coercion for the parameter's type.

        :raises click.BadParameter: ``value`` does not fit the type.
        """
        if value is None:
            return () if param.multiple or param.nargs == -1 else None
        if type(value) in self.PLAIN and self.plain_type() is type(value):
            return value
        if isinstance(value, str) and self.is_path():  # typer's path adapter, unwrapped
            from typer._param_types import coerce_cli_path

            info = self.param.type_descriptor.parameter_info
            return coerce_cli_path(Path(value), info, param=param, ctx=ctx,  # pydantic's
                                   path_type=info.path_type or Path)  # str -> Path, as is
        if self.built is None:
            from typer._coercion import build_runtime_param

            self.built = build_runtime_param(self.param.type_descriptor)
        return self.built.coerce(value, param=param, ctx=ctx)


    def plain_type(self) -> type | None:
        """Return the parameter's type when it is one of :attr:`PLAIN` with nothing that
        changes a value of it (parser, bounds, choices, files), else ``None``."""
        described = self.param.type_descriptor
        info = described.parameter_info
        if (described.annotation in self.PLAIN and info.parser is None and info.min is None
                and info.max is None and described.file_annotation is None
                and not described.is_choice):
            return described.annotation  # type: ignore[no-any-return]
        return None


    def is_path(self) -> bool:
        """Whether the parameter is a plain ``Path`` (typer's adapter for it only calls
        ``coerce_cli_path``, which checks ``exists``, ``resolve_path`` and the rest, after
        pydantic's ``Path(value)``)."""
        described = self.param.type_descriptor
        return (described.annotation is Path and described.parameter_info.parser is None
                and described.file_annotation is None)


def defer_coercion(params: list[Any]) -> list[Any]:
    """Give each typer parameter of ``params`` a :class:`DeferredCoercion` (typer
    versions without ``_runtime_param`` coerce through click and need none).

    :returns: ``params``, changed in place.
    """
    for param in params:
        if getattr(param, "_runtime_param", False) is None and hasattr(param, "type_descriptor"):
            param._runtime_param = DeferredCoercion(param)
    return params


def usage_pieces(params: list[Any], options_metavar: str | None) -> list[str]:
    """Return the usage line's pieces after the command's name: ``[OPTIONS]``, then each
    argument as ``NAME`` (required), ``[NAME]`` (optional), ``...`` after one that takes
    several values.

    :param params: the command's click parameters, metavars set.
    """
    pieces = [options_metavar] if options_metavar else []
    for param in params:
        if param.param_type_name != "argument":
            continue
        name = param.metavar or (param.name or "").upper()
        name = name if param.required else f"[{name}]"
        pieces.append(name + ("..." if param.nargs != 1 else ""))
    return pieces


class Command(TyperCommand):
    """A typer command whose help shows flags bare and values by name, and which says
    ``interrupted`` on stderr and ends with status 130 on Ctrl-C (typer alone ends
    silently)."""

    def get_params(self, ctx: Any) -> list[Any]:
        """Return the command's parameters (``--help`` included), metavars set, an unset
        value left uncoerced."""
        return defer_coercion(natural_metavars(super().get_params(ctx)))

    #: What Ctrl-C while the command runs says on stderr.
    interrupted = "interrupted"

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        """Return the usage line after the command's name (``[OPTIONS] QUERY``)."""
        return usage_pieces(self.get_params(ctx), self.options_metavar)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Parse ``args``; a usage error names this command (so it points to its
        ``--help``).

        :raises UsageError: a missing value, unknown option, bad value.
        """
        try:
            return super().parse_args(ctx, args)
        except UsageError as exc:
            raise with_context(exc, ctx) from None

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """Print the help page (:mod:`.helpview`: typer's layout, without its renderer)."""
        from . import helpview  # rich's tables and panels: loaded for help pages only

        helpview.print_page(helpview.page_of(self, ctx))

    def invoke(self, ctx: Any) -> Any:
        """Run the command; Ctrl-C is ``interrupted`` on stderr and exit status 130; output
        whose reader went away (``octomem export - | head -1``) ends quietly with status
        141 (click's own answer is status 1).

        :raises typer.Exit: status 130 after Ctrl-C, 141 after a closed pipe.
        """
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            print(self.interrupted, file=sys.stderr, flush=True)
            raise typer.Exit(INTERRUPTED) from None
        except BrokenPipeError:
            from .layout import pipe_closed

            raise typer.Exit(pipe_closed()) from None


class IngestCommand(Command):
    """``octomem ingest``: once it stores, it says itself what Ctrl-C left stored
    (:mod:`.ingesting`), so Ctrl-C that reaches the command came before anything was."""

    interrupted = NOTHING_STORED


def not_started() -> typer.Exit:
    """Say on stderr that Ctrl-C came before the command started (:data:`.NOT_STARTED`);
    return the exit to raise, status 130 (typer alone ends silently with it)."""
    from . import NOT_STARTED

    print(NOT_STARTED, file=sys.stderr, flush=True)
    return typer.Exit(INTERRUPTED)


class Group(TyperGroup):
    """The ``octomem`` group: its own options read like its commands' do; Ctrl-C while it
    reads the command line or loads the command says the command did not start
    (:func:`not_started`; a :class:`Command` says ``interrupted`` once it runs)."""

    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        """Make the group's context (its own options read).

        :raises typer.Exit: status 130 after Ctrl-C.
        """
        try:
            return super().make_context(*args, **kwargs)
        except KeyboardInterrupt:
            raise not_started() from None

    def invoke(self, ctx: Any) -> Any:
        """Find, load and run the command (which answers Ctrl-C itself once it runs).

        :raises typer.Exit: status 130 after Ctrl-C before the command ran.
        """
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise not_started() from None

    def get_params(self, ctx: Any) -> list[Any]:
        """Return the group's parameters (``--help`` included), metavars set, an unset
        value left uncoerced."""
        return defer_coercion(natural_metavars(super().get_params(ctx)))

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        """Parse the group's own options; a usage error names the group.

        :raises UsageError: a missing value, unknown option.
        """
        try:
            return super().parse_args(ctx, args)
        except UsageError as exc:
            raise with_context(exc, ctx) from None

    def command_rows(self, ctx: Any) -> list[tuple[str, str]]:
        """Return ``(name, help)`` of each visible subcommand, in order."""
        commands = (self.get_command(ctx, name) for name in self.list_commands(ctx))
        return [(c.name or "", c.short_help or c.help or "") for c in commands
                if c is not None and not c.hidden]

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """Print the help page (:mod:`.helpview`: typer's layout, without its renderer)."""
        from . import helpview  # rich's tables and panels: loaded for help pages only

        helpview.print_page(helpview.page_of(self, ctx, {"Commands": self.command_rows(ctx)}))


# ``--scope`` as each command uses it (its help written for that command).
IngestScopeOpt = Annotated[str, typer.Option("--scope", help=(
    "Where to store: `local` (this project's `.octomem/`) or `global` (every project's)."))]
AddScopeOpt = Annotated[str | None, typer.Option("--scope", help=(
    "Where to store: `local` (this project, the default) or `global` (about the user, for "
    "every project); with `--supersedes`, the superseded statement's scope."))]
SearchScopeOpt = Annotated[str | None, typer.Option("--scope", help=(
    "Search only `local` or only `global` (default: both, ranked together)."))]
ForgetScopeOpt = Annotated[str | None, typer.Option("--scope", help=(
    "Look only in `local` or only in `global` (default: both)."))]
ReindexScopeOpt = Annotated[str | None, typer.Option("--scope", help=(
    "Embed only `local` or only `global` (default: both)."))]
ExportScopeOpt = Annotated[str, typer.Option("--scope", help=(
    "The scope to export: `local` or `global`."))]
VerifyScopeOpt = Annotated[str | None, typer.Option("--scope", help=(
    "Check only `local` or only `global` (default: both)."))]
LogScopeOpt = Annotated[str | None, typer.Option("--scope", help=(
    "Only the calls logged in `local` or in `global` (default: both)."))]
#: ``add --kind``: kinds are an open set (:mod:`octomem.engine.memory.kinds`).
KindOpt = Annotated[str | None, typer.Option("--kind", show_default=False, help=(
    "One word, stored in capitals: ITEM (the default), FACT, PREFERENCE, DECISION, RULE, TODO, or "
    "your own; HANDOFF replaces the previous handoff. A kind neither built in nor already "
    "stored is kept, with a warning (a typo would make a kind of its own)."))]
#: ``search --explain``: every column it adds, said where a user looks (``--help``).
ExplainOpt = Annotated[bool, typer.Option("--explain", help=(
    "Add each arm's own rank and raw score before fusion, a column per arm that ran: "
    "`rank (score)`, `–` where it did not find the hit (`fts5`: "
    "keyword, the BM25 score; `sqlite-vec`: semantic, the cosine similarity). "
    "`conversation`: the reranker's rank of a chat turn among the turns and its score "
    "(higher is better; `–` for notes and documents, which keep their fused place). "
    "`recency`: the bonus for being recent, a share of the fused score (at most "
    "retrieval.recency_weight, halving every retrieval.recency_half_life_days days). "
    "See the README, Reading --explain."))]
#: ``status``, ``config`` and ``plugins``: one JSON document (:mod:`.machine`).
MachineOpt = Annotated[bool, typer.Option("--json", help=(
    "Print it as one JSON object with stable keys, for programs (see docs/settings.md)."))]
JsonLinesOpt = Annotated[bool, typer.Option("--json", help=(
    "Print one JSON object per line."))]

#: ``serve --log-level`` (``octomem.mcp_server.logs.default_level`` when not given).
LogLevelOpt = Annotated[str | None, typer.Option("--log-level", help=(
    "Lowest level logged on stderr: `DEBUG` (the libraries' lines too), `INFO` (one line "
    "per tool call; the default), `WARNING`, `ERROR`. Started at a terminal over stdio the "
    "default is `WARNING`: only the one-line banner shows until something goes wrong."))]

def port_in_range(port: int | None) -> int | None:
    """Check a TCP port option (``--port``, ``--ui-port``): 0..65535 (0: any free port).

    :raises typer.BadParameter: outside that range (a usage error, status 2).
    """
    if port is not None and not 0 <= port <= 65535:
        raise typer.BadParameter(f"{port} is not a TCP port (0..65535; 0: any free port)")
    return port


# ``serve``'s options for the browser view beside it (``octomem ui`` is :mod:`.view`).
UI_TOKEN_HELP = ("every request then needs the token (setting `ui_token`, e.g. "
                 "`OCTOMEM_UI_TOKEN`, else one is generated and printed).")
UiPortOpt = Annotated[int | None, typer.Option("--ui-port", callback=port_in_range, help=(
    "Also serve the browser view (see `octomem ui`) on this port, over the same memory, "
    "stopped with the server."))]
UiHostOpt = Annotated[str, typer.Option("--ui-host", help=(
    "The view's address: loopback unless `--ui-allow-remote`."))]
UiWritesOpt = Annotated[bool, typer.Option("--ui-allow-writes", help=(
    "Offer remember and forget on the view's pages."))]
UiRemoteOpt = Annotated[bool, typer.Option("--ui-allow-remote", help=(
    f"Allow a non-loopback `--ui-host`; {UI_TOKEN_HELP}"))]


def ui_options(host: str, port: int | None, allow_writes: bool, allow_remote: bool) -> Any:
    """Return the browser view's ``UiOptions`` (its module imported by name at run time:
    the engine has no static dependency on the server), or ``None`` without a port."""
    if port is None:
        return None
    options = importlib.import_module("octomem.mcp_server.ui.options")
    return options.UiOptions(host=host, port=port, allow_writes=allow_writes,
                             allow_remote=allow_remote)
