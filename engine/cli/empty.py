"""Why a search found nothing, when the answer itself cannot say: the scopes searched hold
nothing at all, or no stored document has a kind the search was filtered to.

An answer that abstained says why already (its best match is below
``retrieval.relevance_floor``); these are the two cases where there was nothing to
rank, which the README promises an empty answer says too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

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


def why_empty(memory: Memory, scope: str | None, kinds: tuple[str, ...]) -> str | None:
    """Return why a search of ``scope`` (``None``: both) filtered to ``kinds`` could find
    nothing, or ``None`` when something could have matched.

    :returns: ``nothing is stored in the local and global scopes; ingest or add first``,
        or ``no stored document has kind BAR (stored kinds: DOC, FACT)``.
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
    return None
