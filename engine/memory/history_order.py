"""Answers that include superseded statements (``include_superseded``): the current
statement first, what it replaced right after it.

Ranking scores each version on its own, so an old statement that shares more words with
the query (``PostgreSQL 14`` asked about ``14``) would rank above the statement that
replaced it. When both are in an answer, the superseded one is moved to just after its
replacement; the hits are otherwise left in their order. A replacement is the hit of
the same document that is current (an older revision of a re-ingested file), or the
hit of the statement named by ``superseded_by``, followed along the chain.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Longest ``superseded_by`` chain followed to find a replacement among the hits.
MAX_CHAIN = 16


def current_first(hits: list[Any], storages: Mapping[str, Any]) -> list[Any]:
    """Return ``hits`` with each superseded hit moved to just after the hit that replaced
    it, when that hit is in the answer (the others keep their order).

    :param hits: ``ScopedHit`` objects, best first (``scope``, ``chunk``).
    :param storages: scope name -> its storage (``get_document``).
    :returns: the same hits, reordered; ranks are the caller's to renumber.
    """
    current = {(h.scope, h.chunk.document_id): h for h in hits if h.chunk.valid_to is None}
    present: dict[tuple[str, str], Any] = {}
    for hit in hits:  # the first hit of each statement
        present.setdefault((hit.scope, hit.chunk.document_id), hit)
    after: dict[int, list[Any]] = {}
    placed: set[int] = set()
    for hit in hits:
        if hit.chunk.valid_to is None:
            continue
        newer = _replacement(hit, current, present, storages)
        if newer is not None and newer is not hit:
            after.setdefault(id(newer), []).append(hit)
            placed.add(id(hit))
    out: list[Any] = []

    def emit(hit: Any) -> None:
        out.append(hit)
        for old in after.get(id(hit), []):
            emit(old)

    for hit in hits:
        if id(hit) not in placed:
            emit(hit)
    if len(out) < len(hits):  # a supersede cycle (an import can hold one): kept, in place
        shown = {id(h) for h in out}
        out += [h for h in hits if id(h) not in shown]
    return out


def _replacement(hit: Any, current: Mapping[tuple[str, str], Any],
                 present: Mapping[tuple[str, str], Any],
                 storages: Mapping[str, Any]) -> Any | None:
    """The hit that replaced ``hit``: its own document's current revision, else the first
    statement along its document's ``superseded_by`` chain that is a hit (current or not:
    17 -> 16 -> 14, not 17 -> 14 and 16; trial 15 F5); ``None`` when none is."""
    scope, doc_id = hit.scope, hit.chunk.document_id
    if (scope, doc_id) in current:
        return current[(scope, doc_id)]
    storage = storages.get(scope)
    for _ in range(MAX_CHAIN):
        doc = storage.get_document(doc_id) if storage is not None else None
        if doc is None or not doc.superseded_by:
            return None
        doc_id = doc.superseded_by
        if (scope, doc_id) in present:
            return present[(scope, doc_id)]
    return None
