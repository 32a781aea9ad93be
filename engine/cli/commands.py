"""The ``octomem`` command line: the group and its global options (:data:`app`), and the
commands ingest, add, search, forget, reindex, serve, session-start (registered on
:data:`.lazy.registry`, built when first used; export and import are in :mod:`.exchange`,
plugins, status and config in :mod:`.inspecting`)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from ..errors import NotFoundError, OctomemError, UsageValueError
from . import catalog
from . import options as opt
from .context import apply_globals, command_memory, console, err, note_project, state
from .entry import close_memory
from .layout import visible
from .lazy import LazyGroup, registry
from .options import Command, IngestCommand
from .usage import bounded

if TYPE_CHECKING:  # the engine is imported by the commands that use it: --help stays light
    from ..memory.scopes import ScopeName
    from ..pipeline import Pipeline

app = typer.Typer(
    cls=LazyGroup,
    name="octomem",
    help=catalog.APP_HELP,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)
ConfigOpt = Annotated[Path | None, typer.Option("--config", help=catalog.option_help("--config"))]
SetOpt = Annotated[list[str] | None, typer.Option("--set", help=catalog.option_help("--set"))]


def _version(asked: bool) -> None:
    if asked:
        from importlib.metadata import version  # ~50 ms of imports: only when asked

        print(f"octomem {version('octomem')}")
        raise typer.Exit()


@app.callback()
def _main(
    config: ConfigOpt = None,
    set_: SetOpt = None,
    data_dir: Annotated[Path | None, typer.Option(
        "--data-dir", help=catalog.option_help("--data-dir"))] = None,
    project_root: Annotated[Path | None, typer.Option(
        "--project-root", help=catalog.option_help("--project-root"))] = None,
    global_root: Annotated[Path | None, typer.Option(
        "--global-root", help=catalog.option_help("--global-root"))] = None,
    debug: Annotated[bool, typer.Option("--debug", help=catalog.option_help("--debug"))] = False,
    _: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True,
        help=catalog.option_help("--version"))] = False,
) -> None:
    """Read the global options every command shares."""
    apply_globals(config, set_, data_dir, project_root, global_root, debug)


#: Open the memory the global options name (:func:`.context.command_memory`).
_memory = command_memory


def _pipeline(scope: ScopeName = "global") -> Pipeline:
    """Open one scope's pipeline (the global scope by default)."""
    from ..manager import load_registry
    from ..memory.scopes import scope_roots
    from ..pipeline import Pipeline
    from ..settings import load_settings

    loaded = load_settings(state.config, state.overrides, project_root=state.project_root)
    root = scope_roots(loaded.settings, state.project_root, state.global_root).of(scope)
    return Pipeline(loaded, load_registry(), root)


@registry.command(cls=IngestCommand)
def ingest(
    ctx: typer.Context,
    paths: Annotated[list[Path] | None, typer.Argument(
        help="Text/Markdown files, transcripts (.jsonl) or folders.",
        readable=False)] = None,  # one that cannot be read is named, the others stored
    beir: Annotated[Path | None, typer.Option(
        "--beir", help=(
            "A BEIR folder: loads its corpus.jsonl (rows naming a conversation and speaker are "
            "turns)."))] = None,
    scope: opt.IngestScopeOpt = "local",
    fmt: Annotated[str, typer.Option(
        "--format", help=(
            "How .jsonl files are read: `auto` (sniffed; in folders only transcripts), `chat` "
            "(octomem's chat JSON Lines), `claude-code` (Claude Code sessions, e.g. "
            "~/.claude/projects/PROJECT/), or `text` (text files only)."))] = "auto",
    include_ignored: Annotated[bool, typer.Option(
        "--include-ignored", help=(
            "In folders, also read what `.gitignore` and `.octomemignore` files and the tool "
            "folders (`node_modules/`, `__pycache__/`, `site-packages/`, virtual environments) "
            "leave out; hidden files and folders are skipped either way."))] = False,
    readd: Annotated[bool, typer.Option(
        "--readd", help=(
            "Store again what `forget` keeps out of these paths (each named); its forget-log "
            "entry is kept as history."))] = False,
    tag: Annotated[list[str] | None, typer.Option("--tag", help=(
        "A tag every document and turn stored gets (besides a Markdown file's front matter "
        "tags): a label without spaces, e.g. billing-api; repeatable."))] = None,
) -> None:
    """Ingest files and folders (.md, .txt, .rst), chat transcripts and Claude Code sessions
    (.jsonl; see docs/conversations.md), or a BEIR corpus with `--beir DIR`, into a scope
    (default: local, this project's `.octomem/`).

    Re-ingesting an unchanged file does nothing; a changed one becomes a new revision (the
    old chunks are kept as history); a transcript that grew adds its new turns. A malformed
    transcript is an error naming the file and each bad line (up to 20), and nothing of
    that file is stored (in a folder, the file is skipped with that note and the rest is
    stored); an ingest that stores nothing creates no `.octomem/`. A folder
    ingested again reports the files it no longer holds and forgets them (setting
    `ingest.on_missing`: `forget`, or `keep`).

    In folders, hidden files and folders (`.git/`, `.venv/`) are never read, nor is what
    `.gitignore` and `.octomemignore` files leave out, nor tool folders (`node_modules/`,
    `__pycache__/`, `site-packages/`, virtual environments); the command says what it left
    out. `--include-ignored` reads those but hidden ones; a file named itself is always read.

    What you forgot stays out (a file by its path, a turn by its text), each named; a named
    file it keeps out ends with status 1. `--readd` lets them back.

    A Markdown file's front matter (the YAML block between `---` lines at its top) gives
    its title, tags and date (event time) and is not stored as its text.
    """
    if not paths and beir is None:
        ctx.fail("give files or folders to ingest, or --beir DIR")
    from . import ingesting

    memory = _memory()
    note_project(memory, scope)
    try:
        ingesting.run(console, err, memory, paths, beir, scope, fmt, not include_ignored,
                      readd, tuple(tag or ()))
    finally:
        close_memory(memory)


@registry.command(cls=Command)
def add(
    text: Annotated[str, typer.Argument(help="The statement to store; - reads it from stdin.")],
    kind: opt.KindOpt = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help=(
        "A tag: a label without spaces or commas, e.g. billing-api (at most limits.tags, "
        "each limits.tag_chars characters); repeatable: --tag billing --tag api."))] = None,
    scope: opt.AddScopeOpt = None,
    event_time: Annotated[str | None, typer.Option(
        "--event-time", help="When it happened (ISO date).")] = None,
    supersedes: Annotated[str | None, typer.Option(
        "--supersedes", help="Id of the statement this one replaces (kept as history); "
        "not an ingested file or conversation turn (edit and ingest those again, or "
        "forget them).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help=(
        "Print what was stored, replaced and found nearly the same as JSON."))] = False,
) -> None:
    """Remember one statement (local scope by default) and print its id, what it replaced
    and existing statements that say nearly the same."""
    if text == "-":
        data = sys.stdin.buffer.read()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UsageValueError(f"TEXT: stdin is not UTF-8 text ({exc.reason} at byte "
                                  f"{exc.start})") from None
    from ..memory.kinds import stored_kinds, unfamiliar_kind
    from ..memory.limits import tag_labels
    from . import memory as show

    tag_labels(tag or (), "tags")  # an empty tag, as search and the MCP tools refuse it
    memory = _memory()
    note_project(memory, scope)
    try:
        new_kind = kind and unfamiliar_kind(kind, stored_kinds(memory))  # asked before storing
        out = memory.remember(text, scope, kind, tuple(tag or ()), event_time, supersedes)
        show.show_remembered(console, out, as_json)
        if new_kind:
            err.print(Text.assemble(("warning: ", "yellow"), new_kind), highlight=False)
    finally:
        close_memory(memory)


@registry.command(cls=Command)
def search(
    query: Annotated[str, typer.Argument(help="Any text; no query syntax to learn.")],
    top_k: Annotated[int | None, typer.Option(
        "--top-k", "-k", callback=bounded("--top-k", 1),
        help="Number of hits, at least 1 (default: setting retrieval.top_k; at most "
        "limits.top_k).")] = None,
    explain: opt.ExplainOpt = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the answer as JSON.")] = False,
    kind: Annotated[list[str] | None, typer.Option(
        "--kind", help="Only these kinds; repeatable.")] = None,
    tag: Annotated[list[str] | None, typer.Option(
        "--tag", help="Only hits with every tag; repeatable: --tag billing --tag api.")] = None,
    scope: opt.SearchScopeOpt = None,
    since: Annotated[str | None, typer.Option(
        "--since", help="Only statements true from this date on.")] = None,
    until: Annotated[str | None, typer.Option(
        "--until", help="Only statements true from before the end of this date.")] = None,
    as_of: Annotated[str | None, typer.Option(
        "--as-of", help="What was current then (ISO date).")] = None,
    history: Annotated[bool, typer.Option(
        "--include-superseded", help="Also superseded statements.")] = False,
    per: Annotated[str, typer.Option(
        "--per", help="`chunk` or `document` (best chunk per document).")] = "chunk",
    context: Annotated[int, typer.Option(
        "--context", help="Conversation turns shown before and after each turn hit (0-5).")] = 0,
    max_tokens: Annotated[int | None, typer.Option(
        "--max-tokens", help=(
            "Keep the best hits that fit in about N tokens (ceil(chars/4)); list what "
            "was cut."))] = None,
) -> None:
    """Recall: both scopes, keyword and semantic arms fused by reciprocal rank, a bounded
    recency bonus, deduplicated; each hit names its scope.

    Each hit shows up to 3 lines: a document's title, then its text from the sentence
    that best matches the query. The whole texts: `--json`; each arm's rank and score:
    `--explain`."""
    from .searching import run_search

    run_search(query, top_k, explain, as_json, kind, tag, scope, since, until, as_of, history,
               per, context, max_tokens)


@registry.command(cls=Command)
def forget(
    id_or_text: Annotated[str, typer.Argument(help=(
        "A document id, a statement's exact text, or the path of an ingested file, "
        "transcript or folder."))],
    scope: opt.ForgetScopeOpt = None,
    reason: Annotated[str | None, typer.Option(
        "--reason", help="Why (kept in the forget log).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help=(
        "Print what was forgotten (or the statements the text matches) as JSON."))] = False,
) -> None:
    """Forget one statement by id or exact text, or what was ingested from a path (a
    file; a transcript: every turn of it; a folder: every file and turn below it; the
    path need not exist any more), in both scopes unless `--scope`; a text matching
    several removes none and lists them (exit status 1)."""
    from . import memory as show

    memory = _memory()
    try:
        try:
            out = memory.forget(id_or_text, scope, reason)
        except NotFoundError as missing:
            from ..memory.forget_path import not_from_path, path_like
            from ..memory.sources import file_id  # an ingested file, named by its path

            where = path_like(id_or_text, Path.cwd())  # it need not exist any more
            if where is None:  # a statement's text, not a path
                raise
            try:
                out = memory.forget(file_id(where), scope, reason)
            except NotFoundError:
                done = memory.forget_path(where, scope, reason)  # a transcript, a folder
                if done is None:
                    raise not_from_path(missing, where) from None
                show.show_forgotten_path(console, id_or_text, where, *done, reason, as_json)
                return
        if not show.show_forgotten(console, out, as_json, asked=id_or_text):
            same_id = all(doc.id == id_or_text for _, doc in out.matches)
            what = "id is in both scopes" if same_id else "text matches several statements"
            raise OctomemError(f"the {what}; none was removed")
    finally:
        close_memory(memory)


@registry.command(cls=Command)
def reindex(
    embedder: Annotated[str | None, typer.Option(
        "--embedder", help="Embedder to embed for (default: setting `pipeline.embedder`).")] = None,
    scope: opt.ReindexScopeOpt = None,
) -> None:
    """Embed every chunk that has no vector of the selected embedder, in both scopes unless
    `--scope` (resumable).

    Vectors of each embedder are kept side by side, keyed by model id: switching back to
    an embedder used before needs no reindex. Until this finishes, recall uses the
    vectors that exist plus keyword search, and says how many chunks lack a vector.
    """
    if embedder is not None:
        state.overrides.put("pipeline.embedder", embedder, "--embedder")
    from ..memory.scopes import SCOPES, check_scope
    from .reindexing import check_configured
    from .reindexing import reindex as embed_scopes

    memory = _memory()
    try:
        check_configured(memory.settings.pipeline)
        wanted = (check_scope(scope),) if scope else SCOPES
        existing = memory.scopes.existing(wanted)  # type: ignore[arg-type]
        if not existing and not memory.scopes.skipped(wanted):  # type: ignore[arg-type]
            console.print(f"nothing to reindex: no store yet in the {' or '.join(wanted)} "
                          f"{'scope' if len(wanted) == 1 else 'scopes'} (the first write "
                          "creates one; reindex creates none)")
        embed_scopes(console, err, existing)
        if embedder is not None:
            console.print(f"recall uses these vectors while pipeline.embedder is {embedder!r}")
        skipped = memory.scopes.skipped(wanted)  # type: ignore[arg-type]
    finally:
        close_memory(memory)
    for name, why in skipped.items():
        err.print(Text.assemble(("error: ", "red"), f"{name} scope not reindexed: {why}"))
    if skipped:
        raise typer.Exit(1)


@registry.command(cls=Command)
def serve(
    project_root: Annotated[Path | None, typer.Option(
        "--project-root", help=(
            "The project this server serves (an existing folder); its `.octomem/` is the local "
            "scope (default: the nearest folder from the current one upward that holds "
            "`.octomem/`; with none, the nearest that holds `.git`; else the current "
            "directory)."))] = None,
    global_root: Annotated[Path | None, typer.Option(
        "--global-root", help=(
            "The global scope's directory (setting `global_root`; default `data_dir`)."))] = None,
    http: Annotated[str | None, typer.Option(
        "--http", metavar="HOST:PORT", help=(
            "Serve MCP over streamable HTTP at `http://HOST:PORT/mcp` (e.g. `127.0.0.1:8765`) "
            "instead of stdio; several clients at once. Any bind but loopback requires a bearer "
            "token (`OCTOMEM_HTTP_TOKEN`, else one is generated and printed)."))] = None,
    metrics_addr: Annotated[str | None, typer.Option(
        "--metrics-addr", metavar="HOST:PORT", help=(
            "Serve Prometheus metrics at `http://HOST:PORT/metrics` (loopback only, GET only; e.g. "
            "`127.0.0.1:9469`)."))] = None,
    log_format: Annotated[str, typer.Option(
        "--log-format", help=(
            "stderr log lines: `text`, or `json` (one object per line)."))] = "text",
    log_level: opt.LogLevelOpt = None,
    ui_port: opt.UiPortOpt = None, ui_host: opt.UiHostOpt = "127.0.0.1",
    ui_allow_writes: opt.UiWritesOpt = False, ui_allow_remote: opt.UiRemoteOpt = False,
) -> None:
    """Serve one project's memory over MCP: stdio (for Claude Code, Claude Desktop, Cursor,
    ...) or streamable HTTP (`--http`); logs on stderr, metrics on request."""
    # Imported by name at run time: the engine has no static dependency on the server.
    run = importlib.import_module("octomem.mcp_server.serve")
    ui = opt.ui_options(ui_host, ui_port, ui_allow_writes, ui_allow_remote)
    run.serve(state.config, state.overrides, project_root or state.project_root,
              global_root or state.global_root,
              run.ServeOptions(http, metrics_addr, log_format, log_level and log_level.upper(), ui))


@registry.command("session-start", cls=Command)
def session_start(
    max_bytes: Annotated[int | None, typer.Option(
        "--max-bytes", callback=bounded("--max-bytes", 512), help=(
            "Budget in UTF-8 bytes, at least 512 (default: setting "
            "session_start.max_bytes, 8192)."))] = None,
) -> None:
    """Print what an agent should see at the start of a session (the MCP resource
    octomem://session-start): standing rules and preferences, the current handoff, the most
    recent and most recalled statements, within a byte budget."""
    from ..memory.session_start import render as render_session_start

    memory = _memory()
    try:
        budget = max_bytes or memory.settings.session_start.max_bytes
        sys.stdout.write(visible(render_session_start(memory, budget)))
    finally:
        close_memory(memory)


# The MCP tools' names, for people who know those (the README uses them): the same commands.
registry.command("remember", cls=Command, help="Same as `add` (the MCP tool's name).")(add)
registry.command("recall", cls=Command, help=(
    "Same as `search` (the MCP tool's name). Each hit shows up to 3 lines; the whole "
    "texts: `--json`; each arm's rank and score: `--explain`."))(search)
