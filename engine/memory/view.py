"""Reading memory for people and agents: a scope as Markdown (:mod:`.markdown`), one item
with its provenance.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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


@dataclass
class ScopeListing:
    """What a page of one scope lists: its newest statements, and what it only counts.

    :param docs: current statements, newest first by when each happened.
    :param files: current ingested documents (``DOC``), counted, not listed.
    :param turns: current conversation turns, counted, not listed.
    :param older: current statements beyond the listed ones.
    :param gone: forgotten ids some of ``docs`` supersede.
    """

    docs: list[Document]
    files: int
    turns: int
    older: int
    gone: set[str]

    def unlisted(self, older_where: str = "`octomem export --format md` lists every one"
                 ) -> str | None:
        """Return the line saying what is stored but not listed (``None``: nothing)."""
        said = [_count(self.files, "ingested document", "recall finds them"),
                _count(self.turns, "conversation turn", "recall finds them"),
                _count(self.older, "older statement", older_where)]
        return ("Not listed here: " + " and ".join(p for p in said if p) + "."
                if any(said) else None)


def scope_listing(memory: Memory, scope: str, limit: int) -> ScopeListing:
    """Return the scope's current statements (what ``remember``/``add`` stored: every kind
    but ingested documents and conversation turns), newest first by when each happened,
    at most ``limit``; ingested documents, turns and the older statements are counted
    (trial 16 F26: 600 ingested notes took every place, and the statements were left
    out). The counts come from the storage's ``kind_counts`` (one query), and only the
    statements' kinds are read. The MCP resource and the browser view's memory page both
    list this.

    :param scope: ``local`` or ``global`` (checked by the caller).
    """
    pipeline = memory.scopes.get(scope)  # type: ignore[arg-type]
    docs = _statements(memory, scope)
    counts = kind_counts(pipeline) if pipeline is not None else {}
    docs.sort(key=when_happened, reverse=True)  # stable: ties stay newest recorded first
    older, docs = max(0, len(docs) - limit), docs[:limit]
    gone = forgotten_predecessors(pipeline.arms.storage, docs) if pipeline else set()
    return ScopeListing(docs, counts.get(DOC_KIND, 0), counts.get(TURN_KIND, 0), older, gone)


def scope_markdown(memory: Memory, scope: str) -> str:
    """Return ``octomem://memory/{scope}``: :func:`scope_listing` with at most
    :data:`LISTED_STATEMENTS` statements, by kind (:mod:`.markdown`), each text cut to
    :data:`~.markdown.SNIPPET` characters.

    :raises InvalidQueryError: ``scope`` is not ``local`` or ``global``.
    """
    chosen = check_scope(scope) or "local"
    listing = scope_listing(memory, chosen, LISTED_STATEMENTS)
    return render_markdown(chosen, str(memory.roots.of(chosen)), listing.docs,
                           gone=listing.gone, unlisted=listing.unlisted())


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
