"""Reading memory for people and agents: a scope as Markdown (:mod:`.markdown`), one item
with its provenance.
"""

from __future__ import annotations

import re

from ..arms import VersionedStorage
from ..errors import InvalidQueryError, NotFoundError
from ..turns import TURN_KIND
from ..types import Document
from .empty import kind_counts
from .facade import Memory
from .ingest import DOC_KIND
from .markdown import forgotten_predecessors, render_markdown, when_happened
from .results import ItemResult, chunk_item, scoped_item
from .scopes import check_scope
from .session_start import NOT_STATEMENTS
from .times import iso
from .versions import document_version

#: ``scope:chunk_id`` addresses one chunk (``local:42``).
#: ``scope:chunk_id``: ASCII digits only (``\d`` would take ``٣``), at most 18 (an SQLite
#: integer is below 2**63; more would overflow the lookup, not miss).
_CHUNK_REF = re.compile(r"^(local|global):([0-9]{1,18})$")
#: Statements the ``octomem://memory/{scope}`` resource lists at most (newest first; the
#: rest are counted): a client that previews resources pulls the whole text into an
#: agent's context (trial 15 F17: 3.2 MB and 17 s for one 20,000-turn chat).
LISTED_STATEMENTS = 500


def scope_markdown(memory: Memory, scope: str) -> str:
    """Return ``octomem://memory/{scope}``: the scope's current statements (what
    ``remember``/``add`` stored: every kind but ingested documents and conversation turns)
    by kind, newest first by when each happened (:mod:`.markdown`), each text cut to
    :data:`~.markdown.SNIPPET` characters, at most :data:`LISTED_STATEMENTS` of them.
    Ingested documents and turns are counted, not listed (recall finds them), as are the
    older statements beyond that number (trial 16 F26: 600 ingested notes took every
    place, and the statements were left out). The counts come from the storage's
    ``kind_counts`` (one query), and only the statements' kinds are read.

    :raises InvalidQueryError: ``scope`` is not ``local`` or ``global``.
    """
    chosen = check_scope(scope) or "local"
    pipeline = memory.scopes.get(chosen)
    docs = _statements(memory, chosen)
    counts = kind_counts(pipeline) if pipeline is not None else {}
    docs.sort(key=when_happened, reverse=True)  # stable: ties stay newest recorded first
    older, docs = max(0, len(docs) - LISTED_STATEMENTS), docs[:LISTED_STATEMENTS]
    files, turns = counts.get(DOC_KIND, 0), counts.get(TURN_KIND, 0)
    said = [_count(files, "ingested document", "recall finds them"),
            _count(turns, "conversation turn", "recall finds them"),
            _count(older, "older statement", "`octomem export --format md` lists every one")]
    unlisted = "Not listed here: " + " and ".join(p for p in said if p) + "." \
        if any(said) else None
    gone = forgotten_predecessors(pipeline.arms.storage, docs) if pipeline else set()
    return render_markdown(chosen, str(memory.roots.of(chosen)), docs, gone=gone,
                           unlisted=unlisted)


def _count(n: int, what: str, where: str) -> str:
    return f"{n:,} {what}{'s' if n != 1 else ''} ({where})" if n else ""


def _statements(memory: Memory, scope: str) -> list[Document]:
    """Return the scope's current statements, reading only their kinds' rows when the
    storage can count its kinds (documents and turns may be most of a store)."""
    pipeline = memory.scopes.get(scope)
    if pipeline is None:
        return []
    storage = pipeline.arms.storage
    if isinstance(storage, VersionedStorage) and callable(getattr(storage, "kind_counts", None)):
        memory.recall_log.flush()
        kinds = [k for k in kind_counts(pipeline) if k not in NOT_STATEMENTS]
        return list(storage.iter_documents(kinds=kinds)) if kinds else []
    return [d for d in memory.statements(scope) if d.kind not in NOT_STATEMENTS]


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
        version=document_version(doc),
    )
