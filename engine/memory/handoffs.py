"""One current handoff per scope.

A ``HANDOFF`` ("what I was doing, what is next") is the scope's note to the next
session: ``remember`` makes a new one supersede the previous (:mod:`.remember`), and
session start shows the current one (:mod:`.session_start`). An import can bring a
handoff written on another machine beside this store's own: both current, and the next
session would see one of them, chosen by when each was recorded here. So an import ends
by keeping the newest current handoff, by when each was written (its event time, else
when it was recorded; ties: recorded later, then the larger id), and superseding the
others with it, as ``remember`` would have had both been written in one store.
"""

from __future__ import annotations

from typing import Any

from ..types import HANDOFF_KIND, Document


def _newest(doc: Document) -> tuple[float, float, str]:
    return doc.valid_from, doc.created_at, doc.id


def newest_handoff(storage: Any) -> list[Document]:
    """Return the scope's newest current handoff (a list of at most one): the one an
    import keeps, also in a store an older octomem's import left with two."""
    current = list(storage.iter_documents(kinds=(HANDOFF_KIND,)))
    return [max(current, key=_newest)] if current else []


def keep_newest_handoff(storage: Any, tx: Any) -> list[tuple[str, str]]:
    """Supersede every current handoff of ``storage`` but the newest with it, in ``tx``.

    :param storage: a versioned storage (``iter_documents``, ``supersede``).
    :returns: ``(superseded id, newest id)`` per handoff superseded (none when at most one
        is current).
    """
    current = list(storage.iter_documents(kinds=(HANDOFF_KIND,)))
    if len(current) < 2:
        return []
    newest = max(current, key=_newest)
    done = []
    for doc in sorted(current, key=_newest):
        if doc.id != newest.id:
            storage.supersede(tx, doc.id, newest.id, newest.valid_from)
            done.append((doc.id, newest.id))
    return done
