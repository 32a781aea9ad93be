"""The memory tools (remember, recall, forget, ingest, status) over both scopes.

Each tool checks its arguments first (a bad one is a tool error that names it), then
calls the memory on a worker thread. Every :class:`~octomem.engine.errors.OctomemError`
becomes a tool error carrying the error's one-line message; anything else is a crash the
SDK reports as ``Error executing tool <name>`` while the traceback goes to the log.
What the tools teach an agent is in :mod:`.descriptions`.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Annotated, Literal

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import Field

from octomem.engine.errors import (
    InvalidQueryError,
    NotFoundError,
    OctomemError,
    UsageValueError,
)
from octomem.engine.exhaustion import exhaustion
from octomem.engine.memory.context import MAX_CONTEXT, MIN_TOKENS
from octomem.engine.memory.forget_path import not_from_path, path_like
from octomem.engine.memory.limits import check_top_k as engine_top_k
from octomem.engine.memory.limits import tag_labels
from octomem.engine.memory.remember import KIND_INPUT_PATTERN, kind_refusal
from octomem.engine.memory.results import (
    ForgetResult,
    IngestResult,
    MemoryRecallResult,
    RememberResult,
    forget_path_result,
    forget_result,
    ingest_result,
    recall_result,
    remember_result,
)

from . import descriptions as say
from .answer_size import bounded_recall
from .answer_text import tool_answer
from .arguments import StrictServer
from .loader import MemoryLoader, one_line
from .models import StatusResult, status_result
from .observe import refuse
from .stopping import RunningCalls

if TYPE_CHECKING:
    from octomem.engine.memory.facade import Memory

log = logging.getLogger(__name__)

#: The ceiling the tool's schema advertises: the default of the setting ``limits.top_k``.
MAX_TOP_K = 1000

Text = Annotated[str, Field(description="the statement to store, in one or a few sentences")]
WriteScope = Annotated[
    Literal["local", "global"] | None,
    Field(description="local: about this project (default); global: about the user, in every "
          "project. With supersedes: the superseded statement's scope"),
]
ReadScope = Annotated[
    Literal["local", "global"] | None,
    Field(description="only this scope; default: both, ranked together"),
]
IngestScope = Annotated[
    Literal["local", "global"] | None,
    Field(description="local: this project's documents (default); global: for every project"),
]
ForgetScope = Annotated[
    Literal["local", "global"] | None,
    Field(description="look only in this scope; default: both"),
]
Kind = Annotated[
    str | None,
    Field(description="one word, stored in capitals, e.g. FACT, PREFERENCE, DECISION, RULE, "
                      "HANDOFF; default ITEM (a text already stored keeps its kind)",
          json_schema_extra={"pattern": KIND_INPUT_PATTERN}),
]
Tags = Annotated[
    list[str] | None,
    Field(description="short labels without spaces or commas, one item each, e.g. "
          "[\"billing\", \"ci\"] (at most "
          "limits.tags of them, each at most limits.tag_chars characters: 32 and 100 by default)"),
]
IsoTime = Annotated[str | None, Field(description="ISO-8601 date or time, e.g. 2025-03-01")]
Supersedes = Annotated[
    str | None, Field(description="id of the statement this one replaces (kept as history); "
                            "not an ingested document or conversation turn")
]
QueryText = Annotated[
    str, Field(description="what to look for, in plain words (no syntax needed)",
               json_schema_extra={"minLength": 1})
]
TopK = Annotated[
    int | None,
    Field(description=f"number of hits, 1 to {MAX_TOP_K} (default from settings, 10)",
          json_schema_extra={"minimum": 1, "maximum": MAX_TOP_K}),
]
Kinds = Annotated[list[str] | None, Field(
    description="keep statements of any of these kinds (at most limits.filter_values, 100)")]
FilterTags = Annotated[list[str] | None, Field(
    description="keep statements with all these tags (at most limits.filter_values, 100)")]
Since = Annotated[str | None, Field(description="keep statements true from this date on")]
Until = Annotated[str | None, Field(description="keep statements true from before the end "
                                    "of this date")]
AsOf = Annotated[str | None, Field(description="answer with what was current then (ISO date)")]
History = Annotated[bool, Field(description="also return superseded statements")]
Per = Annotated[
    Literal["chunk", "document"],
    Field(description="chunk: every matching passage; document: each document's best once"),
]
Explain = Annotated[bool, Field(description="add each arm's rank and score to every hit")]
Context = Annotated[
    int, Field(description="for a conversation turn hit: how many turns before and after it "
               "to return with it (0 to 5), to read the answer in place",
               json_schema_extra={"minimum": 0, "maximum": MAX_CONTEXT}),
]
MaxTokens = Annotated[
    int | None,
    Field(description="keep the answer within about this many tokens (ceil(characters / 4) "
          "of the hits' titles, tags, texts and context): the best hits that fit, the rest listed "
          "in budget.cut", json_schema_extra={"minimum": MIN_TOKENS}),
]
TextOrId = Annotated[str, Field(description="a statement's id, or its exact full text")]
Reason = Annotated[str | None, Field(description="why it is forgotten (kept in the forget log)")]
PathOrText = Annotated[
    str, Field(description="a file or folder path (absolute or relative to the project), or "
               "the text itself")
]
Title = Annotated[str | None, Field(description="the document's title")]
Format = Annotated[
    Literal["auto", "text", "chat", "claude-code"],
    Field(description="how .jsonl files are read: auto (sniffed; in a folder only the "
          "transcripts), chat (octomem's chat JSON Lines), claude-code (Claude Code "
          "sessions), text (text files only)"),
]
Uri = Annotated[str | None, Field(description="where the text comes from (identifies it)")]
Readd = Annotated[bool, Field(description="store again what forget keeps out of this path "
                                          "(a forgotten file or turn); default false")]


#: An engine error about an argument's value starts with the argument (``top_k: ...``).
_NAMES_ARGUMENT = re.compile(r"[a-z][a-z_]*: ")


def refused(message: str) -> ToolError:
    """Return the tool error for an argument value the caller got wrong (empty, out of
    range, malformed), the call counted ``invalid`` (:func:`~.observe.refuse`), as a wrong
    type or an unknown argument is."""
    refuse()
    return ToolError(message)


@contextmanager
def tool_errors() -> Iterator[None]:
    """Turn an :class:`OctomemError`, or a file-system error (e.g. a project root where
    ``.octomem/`` cannot be created), into a tool error with its one-line message; an
    argument value the engine refused (it names the argument) counts the call ``invalid``,
    anything else the tool met (an unknown id, several matches, a file) ``error``. Memory
    or file descriptors running out, whatever raised it, is the one line of
    :func:`~octomem.engine.exhaustion.exhaustion` (what ran out; nothing stored lost)."""
    try:
        yield
    except Exception as exc:
        if (why := exhaustion(exc, probe=not isinstance(exc, OctomemError | ToolError))) \
                is not None:
            log.warning("%s", why)  # out of memory or files: said, not a crash (M4)
            raise ToolError(one_line(why)) from exc
        if isinstance(exc, OctomemError):
            message = one_line(str(exc))
            if isinstance(exc, InvalidQueryError | UsageValueError) and \
                    _NAMES_ARGUMENT.match(message):
                raise refused(message) from exc
            raise ToolError(message) from exc
        if isinstance(exc, OSError):
            where = f"{exc.filename}: " if exc.filename else ""
            raise ToolError(one_line(f"{where}{exc.strerror or exc}")) from exc
        raise


def check_kind(kind: str, argument: str = "kind") -> str:
    """Return ``kind`` in capitals if it is one word (``fact`` -> ``FACT``).

    :raises ToolError: naming ``argument``.
    """
    if (why := kind_refusal(kind, argument)) is not None:
        raise refused(one_line(why))
    return kind.upper()


def check_tags(tags: Sequence[str] | None, argument: str = "tags") -> tuple[str, ...]:
    """Return the tags stripped, in Unicode NFC, without repeats (order kept), as the
    engine checks them (:func:`~octomem.engine.memory.limits.tag_labels`).

    :raises ToolError: naming ``argument`` when a tag is empty.
    """
    try:
        return tuple(tag_labels(tags or (), argument))
    except InvalidQueryError as exc:
        raise refused(str(exc)) from None


def check_text(text: str, argument: str) -> str:
    """Return ``text`` stripped.

    :raises ToolError: naming ``argument`` when it is empty or only whitespace.
    """
    if not text.strip():
        raise refused(f"{argument}: empty; give the text")
    return text.strip()


def check_top_k(top_k: int | None) -> int | None:
    """Return ``top_k`` (``None`` means the configured default), as the engine checks it
    (:func:`~octomem.engine.memory.limits.check_top_k`) before the memory is loaded.

    :raises ToolError: naming ``top_k`` when below 1 (its ceiling is the setting
        ``limits.top_k``, checked by the memory).
    """
    try:
        return engine_top_k(top_k)
    except InvalidQueryError as exc:
        raise refused(str(exc)) from None


class MemoryTools:
    """The tool functions, bound to one :class:`MemoryLoader` (sync: run on worker threads).

    :param running: where the writes (remember, forget, ingest) count themselves while
        they run, so a server being stopped says what it waits for and stops an ingest's
        embedding early (:mod:`.stopping`).
    """

    def __init__(self, loader: MemoryLoader, running: RunningCalls | None = None) -> None:
        self.loader = loader
        self.running = running or RunningCalls()

    def remember(
        self, text: Text, scope: WriteScope = None, kind: Kind = None, tags: Tags = None,
        event_time: IsoTime = None, supersedes: Supersedes = None,
    ) -> Annotated[CallToolResult, RememberResult]:
        """Store one statement in a scope, embed it, report near duplicates."""
        text, labels = check_text(text, "text"), check_tags(tags)
        kind = None if kind is None else check_kind(kind)
        with tool_errors(), self.running.call("remember"):
            memory = self.loader.memory(warm=True)
            with self.loader.write_lock:
                out = memory.remember(text, scope, kind, labels, event_time, supersedes)
            self.loader.warm_new_scopes()  # a scope this call created
            return tool_answer(remember_result(out))

    def recall(
        self, query: QueryText, scope: ReadScope = None, top_k: TopK = None, kinds: Kinds = None,
        tags: FilterTags = None, since: Since = None, until: Until = None, as_of: AsOf = None,
        include_superseded: History = False, per: Per = "chunk", explain: Explain = False,
        context: Context = 0, max_tokens: MaxTokens = None,
    ) -> Annotated[CallToolResult, MemoryRecallResult]:
        """Search both scopes (or one): every arm, fused, recency, dedup, best first."""
        text, k = check_text(query, "query"), check_top_k(top_k)
        kind_list = tuple(check_kind(k, "kinds") for k in kinds or ())
        with tool_errors():
            answer = self.loader.memory(warm=True).recall(
                text, scope, k, kind_list, check_tags(tags), since, until, as_of,
                include_superseded, per, context=context, max_tokens=max_tokens)
            return tool_answer(bounded_recall(recall_result(text, answer, explain)))

    def forget(self, text_or_id: TextOrId, scope: ForgetScope = None,
               reason: Reason = None) -> Annotated[CallToolResult, ForgetResult]:
        """Forget one statement by id or exact text; several matches remove none."""
        key = check_text(text_or_id, "text_or_id")
        with tool_errors(), self.running.call("forget"):
            memory = self.loader.memory()
            with self.loader.write_lock:
                try:
                    out = memory.forget(key, scope, reason)
                except NotFoundError as missing:
                    path = path_like(key, memory.roots.project)
                    if path is None:
                        raise
                    done = memory.forget_path(path, scope, reason)
                    if done is None:
                        raise not_from_path(missing, path) from None
                    return tool_answer(forget_path_result(key, path, *done, reason))
            return tool_answer(forget_result(out))

    async def ingest(
        self, path_or_text: PathOrText, scope: IngestScope = None, title: Title = None,
        uri: Uri = None, tags: Tags = None, format: Format = "auto",  # noqa: A002
        readd: Readd = False,
    ) -> Annotated[CallToolResult, IngestResult]:
        """Ingest files, transcripts, a folder or a text into a scope; unchanged content is
        a no-op.

        Run on a worker thread; a cancelled call (the client's ``notifications/cancelled``)
        is answered as cancelled at once, and its ingest stops before its next embedding
        batch (:class:`~octomem.engine.stopping.StopRequest`): what it stored stays, the
        chunks it did not embed are embedded by the next ingest of the same files or
        ``octomem reindex`` (trial 18 H10: a cancelled ingest ran to its end while the
        session's next calls waited for it).
        """
        source = check_text(path_or_text, "path_or_text")
        cancelled = threading.Event()

        def work() -> CallToolResult:
            with tool_errors(), self.running.call("ingest", cancelled) as stop:
                memory = self.loader.memory(warm=True)
                with self.loader.ingest_lock, self._creating(memory, scope):
                    target, report = memory.ingest(source, scope, title, uri,
                                                   check_tags(tags), format, confine=True,
                                                   readd=readd is True, stop=stop)
                self.loader.warm_new_scopes()  # a scope this call created
                return tool_answer(ingest_result(target, report))

        try:
            return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            cancelled.set()  # the thread stops at its next batch, the lock with it
            raise

    def _creating(self, memory: Memory, scope: str | None) -> AbstractContextManager[object]:
        """The write lock while an ingest would create ``scope``'s store, else nothing.

        An ingest that creates a store deletes it again when it stores nothing
        (:meth:`~octomem.engine.memory.scopes.ScopeSet.discard_if_empty`); no other write
        may store into it meanwhile, or its statement would go with the file. Into an
        existing store the ingest's transactions take turns with other writes in SQLite.
        """
        if memory.scopes.created(scope or "local"):  # type: ignore[arg-type]
            return nullcontext()
        return self.loader.write_lock

    def status(self) -> Annotated[CallToolResult, StatusResult]:
        """Return both scopes' status and the embedding model's warm-up state."""
        with tool_errors():
            status = self.loader.memory().status()
            state, error, seconds = self.loader.model_state()
            return tool_answer(status_result(status, state, error, seconds))


def _hints(read_only: bool, destructive: bool = False, idempotent: bool = False) -> ToolAnnotations:
    return ToolAnnotations(read_only_hint=read_only, destructive_hint=destructive,
                           idempotent_hint=idempotent, open_world_hint=False)


def register_tools(server: MCPServer, loader: MemoryLoader,
                   running: RunningCalls | None = None) -> MemoryTools:
    """Add remember, recall, forget, ingest and status to ``server``.

    ``recall`` is marked read-only: apart from its usage counters (``recalls``) it
    changes nothing.

    :returns: the tool object (its methods are the registered functions).
    """
    tools = MemoryTools(loader, running)
    add = server.add_strict_tool if isinstance(server, StrictServer) else server.add_tool
    add(tools.remember, name="remember", title="Remember a statement",
        description=say.REMEMBER, annotations=_hints(False))
    add(tools.recall, name="recall", title="Recall memories",
        description=say.RECALL, annotations=_hints(True))
    add(tools.forget, name="forget", title="Forget a memory",
        description=say.FORGET, annotations=_hints(False, destructive=True))
    add(tools.ingest, name="ingest", title="Ingest a document",
        description=say.INGEST, annotations=_hints(False, idempotent=True))
    add(tools.status, name="status", title="Memory status",
        description=say.STATUS, annotations=_hints(True, idempotent=True))
    return tools
