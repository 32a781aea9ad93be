"""Reading memory for people and agents: a scope as Markdown, one item with its provenance.

The Markdown is for reading (MCP resource ``octomem://memory/{scope}``, ``octomem export
--format md``); it is never read back as memory — JSONL export is the lossless format.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..arms import VersionedStorage
from ..errors import InvalidQueryError, NotFoundError
from ..types import Document
from .facade import Memory
from .results import ItemResult, chunk_item, scoped_item
from .scopes import check_scope
from .times import iso, unshowable_times

#: ``scope:chunk_id`` addresses one chunk (``local:42``).
_CHUNK_REF = re.compile(r"^(local|global):(\d+)$")
#: Longest text shown for one document in the Markdown rendering (characters).
SNIPPET = 600


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _entry(doc: Document) -> list[str]:
    """Render one statement or document as a Markdown list item."""
    day = iso(doc.event_time if doc.event_time is not None else doc.created_at)
    head = f"- **{doc.kind}** · {day} · `{doc.id}`"
    if doc.title:
        head += f" · *{_one_line(doc.title)}*"
    text = _one_line(doc.text)
    if len(text) > SNIPPET:
        text = text[: SNIPPET - 1] + "…"
    lines = [head, f"  {text}"]
    extra = []
    if doc.tags:
        extra.append("tags: " + ", ".join(doc.tags))
    if doc.uri:
        extra.append(f"source: {doc.uri}")
    if doc.supersedes:
        extra.append(f"supersedes `{doc.supersedes}`")
    if doc.superseded_by:
        extra.append(f"superseded by `{doc.superseded_by}` on {iso(doc.valid_to)}")
    if extra:
        lines.append("  " + " · ".join(extra))
    return lines


def unshowable(doc: Document) -> str | None:
    """Say why ``doc`` cannot be shown (a stored time outside the calendar), else ``None``."""
    bad = unshowable_times(created_at=doc.created_at, event_time=doc.event_time,
                           valid_to=doc.valid_to, last_recalled_at=doc.last_recalled_at)
    if not bad:
        return None
    return (f"left out {doc.id}: its {', '.join(bad)} cannot be shown; "
            "`octomem verify --repair` fixes it")


def render_markdown(scope: str, where: str, documents: Sequence[Document],
                    history: Sequence[Document] = (), warnings: list[str] | None = None) -> str:
    """Render a scope's current statements, newest first (and, if given, its history).

    A document whose stored times cannot be shown is left out and named at the end (and
    in ``warnings``, when given).

    :param where: the scope's directory, shown in the heading.
    :param history: superseded statements, listed after the current ones.
    """
    left_out: list[str] = []

    def entries(docs: Sequence[Document]) -> list[str]:
        out: list[str] = []
        for doc in docs:
            why = unshowable(doc)
            if why is None:
                out += _entry(doc)
            else:
                left_out.append(why)
        return out

    lines = [f"# octomem · {scope} memory", "",
             f"{len(documents)} current statements, newest first · `{where}`", ""]
    lines += entries(documents)
    if not documents:
        lines.append("_Nothing is remembered in this scope yet._")
    if history:
        lines += ["", "## Superseded", "", *entries(history)]
    if left_out:
        lines += ["", "## Left out", "", *(f"- {why}" for why in left_out)]
    if warnings is not None:
        warnings.extend(left_out)
    return "\n".join(lines) + "\n"


def scope_markdown(memory: Memory, scope: str) -> str:
    """Return ``octomem://memory/{scope}``: the scope's current statements, newest first.

    :raises InvalidQueryError: ``scope`` is not ``local`` or ``global``.
    """
    chosen = check_scope(scope) or "local"
    return render_markdown(chosen, str(memory.roots.of(chosen)), memory.statements(chosen))


def item(memory: Memory, ref: str) -> ItemResult:
    """Return one statement or document (by id), or one chunk (``scope:chunk_id``), with
    its scope, store, history links, usage and chunks.

    :raises NotFoundError: nothing has that id (says so if it was forgotten).
    """
    ref = ref.strip()
    if not ref:
        raise InvalidQueryError("id: empty; give a statement's id or scope:chunk_id")
    found = memory.find(ref)
    chunk = None
    match = _CHUNK_REF.match(ref)
    if not found and match:
        pipeline = memory.scopes.get(match.group(1))  # type: ignore[arg-type]
        chunks = pipeline.arms.storage.get_chunks([int(match.group(2))]) if pipeline else []
        if chunks:
            chunk = chunks[0]
            found = memory.find(chunk.document_id, match.group(1))
    if not found:
        for scope, pipeline in memory.scopes.existing():
            storage = pipeline.arms.storage
            record = storage.get_forgotten(ref) if isinstance(storage, VersionedStorage) else None
            if record is not None:
                raise NotFoundError(f"{ref!r} was forgotten from the {scope} scope on "
                                    f"{iso(record.forgotten_at)}")
        raise NotFoundError(f"no statement, document or chunk has the id {ref!r}")
    scope, doc = found[0]
    storage = memory.scopes.require(scope).arms.storage
    chunks = (storage.document_chunks(doc.id) if isinstance(storage, VersionedStorage)
              else [c for c in storage.iter_chunks(None) if c.document_id == doc.id])
    return ItemResult(
        **scoped_item(scope, doc).model_dump(), store=str(memory.roots.of(scope)),
        chunks=[chunk_item(c) for c in chunks], chunk=chunk_item(chunk) if chunk else None,
    )
