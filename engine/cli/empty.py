"""Why a search found nothing, when the answer itself cannot say: the scopes searched hold
nothing at all, no stored document has a kind or a tag the search was filtered to (tags
are matched exactly, case included), or nothing stored was valid yet at ``--as-of``.

An answer that abstained says why already (its best match is below
``retrieval.relevance_floor``); these are the cases where there was nothing to
rank, which the README promises an empty answer says too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..arms import VersionedStorage

if TYPE_CHECKING:
    from ..memory.facade import Memory
    from ..pipeline import Pipeline


def kind_counts(pipeline: Pipeline) -> dict[str, int]:
    """Return the current documents of one scope per kind (empty for a storage that
    cannot list them)."""
    storage = pipeline.arms.storage
    counts = getattr(storage, "kind_counts", None)
    if callable(counts):
        return dict(counts())
    found: dict[str, int] = {}
    if isinstance(storage, VersionedStorage):
        for doc in storage.iter_documents():
            found[doc.kind] = found.get(doc.kind, 0) + 1
    return found


def _documents(pipeline: Pipeline, history: bool = False) -> list[Any]:
    """Return one scope's documents (current ones unless ``history``), or none for a
    storage that cannot list them; read only when an answer came back empty."""
    storage = pipeline.arms.storage
    if not isinstance(storage, VersionedStorage):
        return []
    return list(storage.iter_documents(include_superseded=history))


def why_empty(memory: Memory, scope: str | None, kinds: tuple[str, ...],
              tags: tuple[str, ...] = (), as_of: float | None = None) -> str | None:
    """Return why a search of ``scope`` (``None``: both) filtered to ``kinds`` and ``tags``
    (at ``as_of``, epoch seconds) could find nothing, or ``None`` when something could have
    matched.

    :returns: ``nothing is stored in the local and global scopes; ingest or add first``,
        ``no stored document has kind BAR (stored kinds: DOC, FACT)``, ``no stored
        document has tag OPS (stored tags: db, ops)`` or ``nothing stored was valid yet
        at 2023-01-01T00:00:00Z (the earliest is from 2025-03-01)``.
    """
    from ..memory.scopes import SCOPES

    wanted = SCOPES if scope is None else (scope,)
    counts: dict[str, int] = {}
    for _, pipeline in memory.scopes.existing(wanted):  # type: ignore[arg-type]
        for kind, n in kind_counts(pipeline).items():
            counts[kind] = counts.get(kind, 0) + n
    if not any(counts.values()):
        where = " and ".join(wanted)
        return (f"nothing is stored in the {where} {'scope' if len(wanted) == 1 else 'scopes'}"
                "; ingest or add first")
    if kinds and not any(counts.get(k) for k in kinds):
        stored = ", ".join(k for k, n in sorted(counts.items()) if n)
        return f"no stored document has kind {' or '.join(kinds)} (stored kinds: {stored})"
    pipelines = [p for _, p in memory.scopes.existing(wanted)]  # type: ignore[arg-type]
    if tags:
        stored_tags = {t for p in pipelines for d in _documents(p) for t in d.tags}
        missing = [t for t in tags if t not in stored_tags]
        if missing:
            return (f"no stored document has tag {' or '.join(missing)} (stored tags: "
                    f"{', '.join(sorted(stored_tags)) or 'none'}; tags match exactly, "
                    "case included)")
    if as_of is not None:
        starts = [d.valid_from for p in pipelines for d in _documents(p, history=True)]
        if starts and min(starts) > as_of:
            return (f"nothing stored was valid yet at {_shown(as_of)} (the earliest is from "
                    f"{_shown(min(starts))})")
    return None


def _shown(ts: float) -> str:
    """Return epoch seconds as an ISO-8601 UTC time, to the second."""
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
