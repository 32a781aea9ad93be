"""What each page shows, read from the memory (no HTTP here; :mod:`.pages` renders it).

Every function only reads: a search is a recall with ``count=False`` (a person looking
is not an agent recalling, and a GET changes nothing), and opening a page never creates
a scope.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from itertools import islice
from typing import Any
from urllib.parse import quote

from markdown_it import MarkdownIt

from octomem.engine.arms import VersionedStorage
from octomem.engine.errors import InvalidQueryError
from octomem.engine.memory.facade import Memory
from octomem.engine.memory.ingest import DOC_KIND
from octomem.engine.memory.results import MemoryRecallResult, recall_result
from octomem.engine.memory.scopes import SCOPES, check_scope
from octomem.engine.memory.view import ScopeListing, item, render_markdown, scope_listing
from octomem.engine.turns import TURN_KIND
from octomem.engine.types import Chunk, Document, Filters

#: Statements of a scope shown on the memory page (newest first); the rest are counted.
SHOWN_STATEMENTS = 200
#: Ingested documents and conversations linked from the memory page (newest first).
SHOWN_SOURCES = 20
#: Longest supersede chain walked from an item, each way.
MAX_CHAIN = 50
#: Turns shown around the hit in a conversation (each side); the rest are counted.
TURNS_AROUND = 200
#: Most turns read for one conversation page.
MAX_TURNS = 5000
#: Longest number (digits) read from a query parameter; a longer one is refused as too large.
MAX_DIGITS = 30
#: Metadata keys a turn of a conversation carries (transcript ingest).
TURN_KEYS = ("conversation", "session", "position", "speaker", "role", "time")

_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False})


@dataclass
class SearchForm:
    """The search page's query string, checked.

    :param top_k: hits asked for, at least 1; its ceiling is the setting ``limits.top_k``,
        as for the CLI and the MCP tool (the search itself refuses more, naming it).
    """

    q: str = ""
    scope: str = ""
    kinds: str = ""
    tags: str = ""
    since: str = ""
    until: str = ""
    as_of: str = ""
    superseded: bool = False
    per: str = "chunk"
    top_k: int = 10

    @classmethod
    def parse(cls, params: Mapping[str, str]) -> SearchForm:
        """Read the form from query parameters (missing ones take their defaults).

        :raises InvalidQueryError: ``top_k`` is not a whole number (ASCII digits) of at
            least 1, or has more than :data:`MAX_DIGITS` digits, or ``per`` or ``scope`` is
            unknown; the message names it. A ``top_k`` over the setting ``limits.top_k`` is
            refused by the search, naming the setting.
        """
        raw_k = params.get("top_k", "").strip() or "10"
        top_k = whole_number(raw_k)
        if top_k is None or top_k < 1:
            raise InvalidQueryError(f"top_k: must be a whole number of at least 1, got "
                                    f"{raw_k[:20]!r}")
        if top_k >= 10 ** MAX_DIGITS:  # the memory names the ceiling for any shorter one
            raise InvalidQueryError(f"top_k: a number of {len(raw_k.lstrip('0')):,} digits "
                                    "is more than limits.top_k")
        per = params.get("per", "chunk") or "chunk"
        if per not in ("chunk", "document"):
            raise InvalidQueryError(f"per: must be 'chunk' or 'document', got {per!r}")
        scope = params.get("scope", "").strip()
        check_scope(scope or None)
        return cls(q=params.get("q", "").strip(), scope=scope,
                   kinds=params.get("kinds", "").strip(), tags=params.get("tags", "").strip(),
                   since=params.get("since", "").strip(), until=params.get("until", "").strip(),
                   as_of=params.get("as_of", "").strip(),
                   superseded=params.get("superseded", "") in ("1", "on", "true"),
                   per=per, top_k=top_k)


def whole_number(text: str) -> int | None:
    """Return ``text`` as a whole number if it is ASCII digits only, else ``None``.

    ``str.isdigit`` is true for ``²``, ``٣`` and ``３`` too; ``int`` refuses the first
    (a crash) and reads the others as 3 (a silent guess). A number too long for ``int``
    (Python's 4,300-digit limit) is read as ``10 ** MAX_DIGITS``, more than any ceiling.
    """
    if not text or not text.isascii() or not text.isdigit():
        return None
    digits = text.lstrip("0") or "0"
    return int(digits) if len(digits) <= MAX_DIGITS else 10 ** MAX_DIGITS


def words(text: str) -> list[str]:
    """Split a comma- or space-separated list (kinds, tags), dropping empty items."""
    return [w for w in re.split(r"[,\s]+", text) if w]


@dataclass
class SearchView:
    """A search and its explained answer (``result`` is ``None`` before a query)."""

    form: SearchForm
    result: MemoryRecallResult | None = None
    arms: list[str] = field(default_factory=list)
    relevance: bool = False


def search(memory: Memory, form: SearchForm) -> SearchView:
    """Recall ``form.q`` with its filters, explained, without counting it as a recall.

    :raises InvalidQueryError: a bad filter value, named by the memory.
    """
    if not form.q:
        return SearchView(form)
    answer = memory.recall(
        form.q, form.scope or None, form.top_k, words(form.kinds.upper()), words(form.tags),
        form.since or None, form.until or None, form.as_of or None, form.superseded, form.per,
        count=False)
    result = recall_result(form.q, answer, explain=True)
    shown = result.hits or ([result.best_rejected] if result.best_rejected else [])
    arms = list(dict.fromkeys(a for h in shown for a in (h.arms or {})))
    arms = [a for a in result.arms_ran if a in arms] + [a for a in arms
                                                          if a not in result.arms_ran]
    relevance = any(getattr(h, "relevance", None) is not None for h in shown)
    return SearchView(form, result, arms, relevance)


def _storage(memory: Memory, scope: str) -> Any:
    pipeline = memory.scopes.get(scope)  # type: ignore[arg-type]
    return pipeline.arms.storage if pipeline is not None else None


def supersede_chain(memory: Memory, scope: str, doc: Document) -> list[Document]:
    """Return the statements ``doc`` replaced and that replaced it, oldest first
    (``doc`` included; at most :data:`MAX_CHAIN` each way)."""
    storage = _storage(memory, scope)
    older: list[Document] = []
    seen = {doc.id}
    cursor = doc
    while cursor.supersedes and len(older) < MAX_CHAIN and cursor.supersedes not in seen:
        found = storage.get_document(cursor.supersedes)
        if found is None:
            break
        older.append(found)
        seen.add(found.id)
        cursor = found
    newer: list[Document] = []
    cursor = doc
    while cursor.superseded_by and len(newer) < MAX_CHAIN and cursor.superseded_by not in seen:
        found = storage.get_document(cursor.superseded_by)
        if found is None:
            break
        newer.append(found)
        seen.add(found.id)
        cursor = found
    return [*reversed(older), doc, *newer]


@dataclass
class Turn:
    """One turn of a conversation, as a transcript shows it."""

    chunk_id: int
    document_id: str
    session: str
    position: int
    speaker: str
    role: str
    time: str | None
    text: str
    current: bool


def _turn(chunk: Chunk) -> Turn | None:
    """Read a chunk as a turn (``None`` unless its metadata names a speaker or role)."""
    meta = chunk.metadata or {}
    if "speaker" not in meta and "role" not in meta:
        return None
    try:
        position = int(meta.get("position", chunk.ordinal))
    except (TypeError, ValueError):
        position = chunk.ordinal
    speaker = str(meta.get("speaker") or meta.get("role") or "")
    said = chunk.text.removeprefix(f"{speaker}: ")  # stored as "<speaker>: <what was said>"
    return Turn(chunk.id, chunk.document_id, str(meta.get("session", "")), position, speaker,
                str(meta.get("role") or ""),
                str(meta["time"]) if meta.get("time") else None,  # not the ingest time
                said, chunk.valid_to is None)


def conversation(memory: Memory, scope: str, name: str) -> list[Turn]:
    """Return the current turns of conversation ``name`` in ``scope``, in the order said.

    :raises InvalidQueryError: ``scope`` is unknown.
    """
    storage = _storage(memory, check_scope(scope) or "local")
    if storage is None:
        return []
    chunks = storage.iter_chunks(Filters(metadata={"conversation": name}))
    turns = [t for c in islice(chunks, MAX_TURNS) if (t := _turn(c)) is not None]
    return sorted(turns, key=lambda t: (t.position, t.chunk_id))


def around(turns: list[Turn], chunk_id: int | None) -> tuple[list[Turn], int, int]:
    """Cut ``turns`` to :data:`TURNS_AROUND` each side of ``chunk_id``.

    :returns: ``(turns shown, turns left out before, turns left out after)``.
    """
    at = next((i for i, t in enumerate(turns) if t.chunk_id == chunk_id), 0)
    start = max(0, at - TURNS_AROUND)
    end = min(len(turns), at + TURNS_AROUND + 1)
    return turns[start:end], start, len(turns) - end


def item_page(memory: Memory, ref: str) -> dict[str, Any]:
    """Return what the item page shows: the item, its supersede chain, its chunks as a
    transcript when they are turns, and the conversation they belong to.

    :raises NotFoundError: nothing has that id (says so if it was forgotten).
    """
    found = item(memory, ref)
    storage = _storage(memory, found.scope)
    doc = storage.get_document(found.id)
    chain = supersede_chain(memory, found.scope, doc) if doc is not None else []
    chunks = (storage.document_chunks(found.id) if isinstance(storage, VersionedStorage) else [])
    turns = [t for c in chunks if (t := _turn(c)) is not None]
    meta = dict(doc.metadata) if doc is not None else {}
    named = next((str(c.metadata["conversation"]) for c in chunks
                  if (c.metadata or {}).get("conversation")), None)
    return {"item": found, "chain": chain, "turns": turns, "metadata": meta,
            "conversation": named or meta.get("conversation")}


def _linked(html: str, ids: set[str]) -> str:
    """Turn each ``<code>id</code>`` of a known statement into a link to its page."""
    known = {escape(doc_id, quote=False): doc_id for doc_id in ids}

    def link(match: re.Match[str]) -> str:
        doc_id = known.get(match.group(1))
        if doc_id is None:
            return match.group(0)
        return (f'<a href="/item/{escape(quote(doc_id, safe=""), quote=True)}">'
                f'<code>{match.group(1)}</code></a>')
    return re.sub(r"<code>([^<]{1,200})</code>", link, html)


def scope_blocks(memory: Memory, scopes: Sequence[str] = SCOPES) -> list[dict[str, Any]]:
    """Return each of ``scopes``' directory, counts and standing memory (Markdown and HTML).

    The standing memory is the ``octomem://memory/{scope}`` resource's listing
    (:func:`~octomem.engine.memory.view.scope_listing`): the newest
    :data:`SHOWN_STATEMENTS` current statements by when each happened, ingested
    documents and turns counted (trial 16: the page listed the newest 200 documents of
    any kind, so an ingested folder hid every statement). Below it, links to the newest
    :data:`SHOWN_SOURCES` ingested documents and conversations.
    """
    status = memory.status()["scopes"]
    blocks = []
    for scope in scopes:
        info = status[scope]
        storage = _storage(memory, scope) if info.get("exists") else None
        listing = (scope_listing(memory, scope, SHOWN_STATEMENTS) if storage is not None
                   else ScopeListing([], 0, 0, 0, set()))
        unlisted = listing.unlisted(f"`octomem export --scope {scope} --format md -` "
                                    "prints every one")
        text = render_markdown(scope, info["root"], listing.docs, gone=listing.gone,
                               unlisted=unlisted)
        blocks.append({
            "scope": scope, "info": info, "markdown": text, "listing": listing,
            "html": _linked(_markdown.render(text), {d.id for d in listing.docs}),
            "files": _newest(storage, DOC_KIND, listing.files),
            "conversations": (names := _conversations(storage, listing.turns)),
            "conversations_cut": len(names) >= SHOWN_SOURCES,
        })
    return blocks


def _newest(storage: Any, kind: str, count: int) -> list[Document]:
    """Return the newest :data:`SHOWN_SOURCES` current documents of ``kind`` (recorded)."""
    if not count or not isinstance(storage, VersionedStorage):
        return []
    return list(islice(storage.iter_documents(kinds=[kind]), SHOWN_SOURCES))


def _conversations(storage: Any, turns: int) -> list[str]:
    """Return the names of the conversations the newest turns belong to (at most
    :data:`SHOWN_SOURCES` names, read from the newest :data:`MAX_TURNS` turns)."""
    names: dict[str, None] = {}
    if not turns or not isinstance(storage, VersionedStorage):
        return []
    for doc in islice(storage.iter_documents(kinds=[TURN_KIND]), MAX_TURNS):
        name = (doc.metadata or {}).get("conversation")
        if name:
            names[str(name)] = None
            if len(names) >= SHOWN_SOURCES:
                break
    return list(names)
