"""The four memory tools (remember, recall, forget, status) and what they teach an agent.

Each tool checks its arguments first (a bad one is a tool error that names it), then
calls the pipeline on a worker thread. Every :class:`~octomem.engine.errors.OctomemError`
becomes a tool error carrying the error's one-line message; anything else is a crash the
SDK reports as ``Error executing tool <name>`` while the traceback goes to the log.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from octomem.engine.errors import OctomemError
from octomem.engine.results import RecallResult, StoredItem, recall_result, stored_item
from octomem.engine.types import DEFAULT_KIND, Document, Filters, Query

from .loader import PipelineLoader, one_line
from .models import RememberedItem, StatusResult, status_result

#: A kind is one word in capitals: a letter, then letters, digits or underscores.
KIND_PATTERN = r"^[A-Z][A-Z0-9_]*$"
MAX_TOP_K = 1000

REMEMBER = """\
Store one durable statement in long-term memory so that a later session can recall it.

Use it for what will matter next time: the user's preferences, decisions and their reasons, \
project conventions, corrections, facts learned the hard way. Call `recall` first with the \
gist: if a memory already says it, do not store it again; if an old memory is wrong, \
`forget` it by id and then remember the corrected statement.

Write one self-contained statement per call (name the subject instead of "it" or "this"); \
not a transcript, and never secrets. `kind` classifies it: one word in capitals such as FACT, \
PREFERENCE, DECISION, TODO (default ITEM). `tags` are short labels that `recall` can filter \
on. Returns the stored item with its id; `embedded: false` means it is found by its words \
only until the embedding model is available."""

RECALL = """\
Search long-term memory; returns the stored statements that best match the query, best first.

Call it at the start of a task and whenever past context could help (what the user prefers, \
what was decided, how this project does something), and always before `remember`, to avoid \
duplicates. It matches exact words (BM25 keyword search) and meaning (embeddings), fused by \
reciprocal rank, so plain natural language works: any text is a valid query, there is no \
query syntax. Narrow with `kinds` (any of them) and `tags` (all of them). `explain: true` \
adds each arm's rank and score to every hit. The answer names the arms that ran and those \
unavailable, with the reason. No hits means nothing relevant is stored."""

FORGET = """\
Delete one stored memory, given its id (from `recall` or `remember`) or its exact full text.

Use it when a memory is wrong or outdated, or the user asks you to forget something; to \
correct a memory, forget it and then `remember` the corrected statement. When the text \
matches several memories none is deleted and the error lists their ids: call again with \
one id. Returns the deleted item."""

STATUS = """\
Report what the memory holds and how its retrieval is assembled.

Gives document and chunk counts, chunks still without a vector, size on disk, the arm used \
for each kind (storage, keyword, embedder, semantic, reranker, dedup), the embedding model, \
whether semantic search is available, and the model's warm-up state (`model_state`). Use it \
to explain empty or keyword-only answers; it is not needed before ordinary use."""

Text = Annotated[str, Field(description="the statement to store, in one or a few sentences")]
Kind = Annotated[
    str,
    Field(description="one word in capitals, e.g. FACT, PREFERENCE, DECISION, TODO",
          json_schema_extra={"pattern": KIND_PATTERN}),
]
Tags = Annotated[
    list[str] | None, Field(description="short labels, e.g. [\"project-x\", \"billing\"]")
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
Kinds = Annotated[list[str] | None, Field(description="keep memories of any of these kinds")]
FilterTags = Annotated[list[str] | None, Field(description="keep memories carrying all these tags")]
Explain = Annotated[bool, Field(description="add each arm's rank and score to every hit")]
IdOrText = Annotated[str, Field(description="a memory's id, or its exact full text")]


@contextmanager
def tool_errors() -> Iterator[None]:
    """Turn an :class:`OctomemError` into a tool error with its one-line message."""
    try:
        yield
    except OctomemError as exc:
        raise ToolError(one_line(str(exc))) from exc


def check_kind(kind: str, argument: str = "kind") -> str:
    """Return ``kind`` if it is one word in capitals.

    :raises ToolError: naming ``argument``.
    """
    if not isinstance(kind, str) or not re.fullmatch(KIND_PATTERN, kind):
        raise ToolError(
            f"{argument}: must be one word in capitals (letters, digits, _), e.g. FACT; "
            f"got {kind!r}"
        )
    return kind


def check_tags(tags: Sequence[str] | None, argument: str = "tags") -> tuple[str, ...]:
    """Return the tags stripped and without repeats (order kept).

    :raises ToolError: naming ``argument`` when a tag is empty.
    """
    cleaned: list[str] = []
    for tag in tags or ():
        if not tag.strip():
            raise ToolError(f"{argument}: a tag is empty; give short non-empty labels")
        if tag.strip() not in cleaned:
            cleaned.append(tag.strip())
    return tuple(cleaned)


def check_text(text: str, argument: str) -> str:
    """Return ``text`` stripped.

    :raises ToolError: naming ``argument`` when it is empty or only whitespace.
    """
    if not text.strip():
        raise ToolError(f"{argument}: empty; give the text")
    return text.strip()


def check_top_k(top_k: int | None) -> int | None:
    """Return ``top_k`` (``None`` means the configured default).

    :raises ToolError: naming ``top_k`` when outside 1..:data:`MAX_TOP_K`.
    """
    if top_k is not None and not 1 <= top_k <= MAX_TOP_K:
        raise ToolError(f"top_k: must be between 1 and {MAX_TOP_K}, got {top_k}")
    return top_k


class MemoryTools:
    """The tool functions, bound to one :class:`PipelineLoader` (sync: run on worker threads)."""

    def __init__(self, loader: PipelineLoader) -> None:
        self.loader = loader

    def remember(self, text: Text, kind: Kind = DEFAULT_KIND, tags: Tags = None) -> RememberedItem:
        """Store ``text`` as a one-statement document and embed it."""
        document = Document(
            text=check_text(text, "text"), kind=check_kind(kind), tags=check_tags(tags)
        )
        with tool_errors():
            pipeline = self.loader.pipeline(warm=True)
            with self.loader.write_lock:
                report = pipeline.add([document])
        item = stored_item(document)
        return RememberedItem(
            **item.model_dump(), embedded=report.embedded > 0,
            semantic_error=report.semantic_error,
        )

    def recall(
        self, query: QueryText, top_k: TopK = None, kinds: Kinds = None,
        tags: FilterTags = None, explain: Explain = False,
    ) -> RecallResult:
        """Search memory: every retrieval arm, fused, deduplicated, ``top_k`` best first."""
        text, k = check_text(query, "query"), check_top_k(top_k)
        filters = Filters(
            kinds=tuple(check_kind(k, "kinds") for k in kinds or ()),
            tags=check_tags(tags),
        )
        with tool_errors():
            pipeline = self.loader.pipeline(warm=True)
            k = k or pipeline.settings.retrieval.top_k
            answer = pipeline.search(Query(text=text, top_k=k, filters=filters))
        return recall_result(text, answer, explain)

    def forget(self, id_or_text: IdOrText) -> StoredItem:
        """Delete one memory by id or exact text; several matches delete none."""
        key = check_text(id_or_text, "id_or_text")
        with tool_errors():
            pipeline = self.loader.pipeline()
            with self.loader.write_lock:
                document = pipeline.forget(key)
        return stored_item(document)

    def status(self) -> StatusResult:
        """Return the pipeline's status and the embedding model's warm-up state."""
        with tool_errors():
            status = self.loader.pipeline().status()
            state, error, seconds = self.loader.model_state()
        return status_result(status, state, error, seconds)


def register_tools(server: MCPServer, loader: PipelineLoader) -> MemoryTools:
    """Add remember, recall, forget and status to ``server``.

    :returns: the tool object (its methods are the registered functions).
    """
    tools = MemoryTools(loader)
    server.add_tool(
        tools.remember, name="remember", title="Remember a statement", description=REMEMBER,
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False,
                                    idempotent_hint=False, open_world_hint=False),
    )
    server.add_tool(
        tools.recall, name="recall", title="Recall memories", description=RECALL,
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True,
                                    open_world_hint=False),
    )
    server.add_tool(
        tools.forget, name="forget", title="Forget a memory", description=FORGET,
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True,
                                    idempotent_hint=False, open_world_hint=False),
    )
    server.add_tool(
        tools.status, name="status", title="Memory status", description=STATUS,
        annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True,
                                    open_world_hint=False),
    )
    return tools
