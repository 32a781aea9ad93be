"""The rows a filter keeps, remembered while neither in-RAM copy changes.

A filtered search of the in-RAM matrix first turns its filters into matrix rows: a mask
from the storage's filter index, gathered by the matrix's chunk ids, then its row
numbers (~0.1 ms at 10k on 2 loaded cores), and, for a selective filter, gathers those
rows' vectors into a buffer before scoring them (:mod:`.row_gather`: ~0.1-0.3 ms at 10 %
of 10k, ~9 ms at 10 % of 100k). The same filters are asked again and again: every
question of one conversation (``--group-by``), one tag, one kind. This keeps, per
filters, the mask, its rows and, for a selective filter, the gathered vectors (with
their chunk ids and inverse norms: :func:`.scan.kept_top` needs nothing else), for as
long as both copies stay at the change-log position they were made at (any write moves
it: then everything is dropped). The vectors are gathered when a filter is asked a
second time, so a filter asked once (``as_of`` now, say) costs no copy. A search of a
kept filter scores the kept vectors directly; the scores are the same bits
(:func:`.row_gather.scores_of`), so the answers are those of a search that computes
everything again.

Memory: what the kept filters hold (masks, row numbers, gathered vectors) is at most
``SqliteVecOptions.filter_cache_mb`` in total (least recently used dropped first; a
subset larger than that is used for its search and not kept), and at most
:data:`ENTRIES` filters are kept.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from octomem.engine.types import Filters

from ..sqlite.commit_watch import CommitWatch
from ..sqlite.filter_index import allowed_at
from . import row_gather

if TYPE_CHECKING:
    from ..sqlite.filter_index import FilterIndex
    from .matrix import VectorMatrix

#: Filters kept per vector set (each entry without vectors costs its mask and rows, a
#: few bytes per vector).
ENTRIES = 32


@dataclass(slots=True)
class Subset:
    """What one filters value allows in one state of the copies.

    :ivar mask: bool ``(count,)`` over matrix rows, ``None`` when every row passes.
    :ivar rows: int64 ``np.flatnonzero(mask)``, ``None`` with ``mask``.
    :ivar gathered: :func:`.row_gather.gather` of ``rows`` (float32, C-contiguous), or
        ``None`` when the scan does not gather them (not selective, or over budget).
    :ivar ids: int64 chunk ids of ``rows``, kept with ``gathered`` (else ``None``).
    :ivar inv_norms: float32 inverse L2 norms of ``rows``, kept with ``gathered``.
    """

    mask: np.ndarray | None
    rows: np.ndarray | None
    gathered: np.ndarray | None = None
    ids: np.ndarray | None = None
    inv_norms: np.ndarray | None = None
    tried: bool = False  # gathering was considered (on the second search of the filter)

    @property
    def nbytes(self) -> int:
        """Bytes held: the mask, the row numbers, the gathered vectors and their ids and
        norms (all budgeted: at 1M rows a mask and its rows alone are up to 9 MB)."""
        return sum(int(a.nbytes) for a in (self.mask, self.rows, self.gathered, self.ids,
                                            self.inv_norms) if a is not None)


def filters_key(filters: Filters) -> Hashable:
    """Return a hashable key equal for equal ``filters`` (metadata as sorted ``str``
    pairs, the rendering the filter index compares)."""
    items = filters.metadata.items()
    if not items:
        meta: tuple[tuple[str, str], ...] = ()
    elif len(items) == 1:  # most filters: no sort, no generator
        [(key, value)] = items
        meta = ((str(key), str(value)),)
    else:
        meta = tuple(sorted((str(k), str(v)) for k, v in items))
    return (filters.kinds, filters.tags, filters.created_after, filters.created_before, meta,
            filters.valid_after, filters.valid_before, filters.as_of,
            filters.include_superseded)


class SubsetCache:
    """Subsets of one vector set's matrix, by filters, for one state of the copies.

    Not thread-safe on its own: the arm uses it under the matrix's lock.

    :param budget_bytes: the most bytes kept at once (0: nothing is kept).
    """

    def __init__(self, budget_bytes: int) -> None:
        self.budget = max(int(budget_bytes), 0)
        self.state: Any = None
        self.entries: OrderedDict[Hashable, Subset] = OrderedDict()
        self.held = 0  # bytes of gathered vectors kept
        #: tells the scan that nothing was committed since it last read the change log
        self.watch = CommitWatch()

    def kept(self, key: Hashable, state: Any) -> Subset | None:
        """Return the subset of ``key`` in ``state`` when it is kept and was asked before
        (nothing left to gather), marked most recently used; else ``None`` (see :meth:`get`)."""
        if state == self.state:
            subset = self.entries.get(key)
            if subset is not None and subset.tried:
                self.entries.move_to_end(key)
                return subset
        return None

    def get(self, key: Hashable, state: Any, make: Callable[[], Subset],
            gather: Callable[[Subset], None], row_bytes: int) -> Subset:
        """Return the subset of ``key`` in ``state``, making and keeping it when absent
        (its mask and rows), and gathering its rows when it is asked for a second time.

        :param state: anything equal while the copies are unchanged (e.g. both change-log
            positions and the row count); another state drops every kept subset.
        :param make: computes the subset without gathered vectors.
        :param gather: sets the subset's gathered vectors, ids and inverse norms when the
            scan would gather its rows, else leaves them ``None``; called only when they fit
            the budget.
        :param row_bytes: bytes of one gathered row with its id and norm (``dim * 4 + 12``).
        """
        if state != self.state:
            self.entries.clear()
            self.state, self.held = state, 0
        subset = self.entries.get(key)
        if subset is None:  # first sight: the mask and rows only (a filter asked once,
            # e.g. as_of now, would pay a copy it never uses)
            subset = self.entries[key] = make()
            self.held += subset.nbytes
        else:
            self.entries.move_to_end(key)
            rows = subset.rows
            if (not subset.tried and rows is not None
                    and subset.nbytes + (len(rows) + 4) * row_bytes <= self.budget):
                subset.tried = True  # asked again: gather its rows once, if the scan would
                before = subset.nbytes
                gather(subset)
                self.held += subset.nbytes - before
        while self.entries and (self.held > self.budget or len(self.entries) > ENTRIES):
            _, old = self.entries.popitem(last=False)
            self.held -= old.nbytes
        return subset


def subset_of(cache: SubsetCache, matrix: VectorMatrix, fields: FilterIndex,
              filters: Filters) -> Subset:
    """Return the matrix rows ``filters`` allows (kept in ``cache``); call holding the
    matrix's lock, both copies synced (the state is their change-log positions)."""
    key, state = filters_key(filters), (matrix.seq, fields.seq, matrix.count)
    subset = cache.kept(key, state)
    if subset is not None:
        return subset

    def make() -> Subset:
        mask = allowed_at(fields.mask(filters), matrix.ids[:matrix.count])
        return Subset(mask, None if mask is None else np.flatnonzero(mask))

    def gather(subset: Subset) -> None:
        rows = subset.rows
        if rows is not None and matrix._gathers(len(rows), exact=not filters.is_empty()):
            subset.gathered = row_gather.gather(matrix._rows_major(), rows)
            subset.ids, subset.inv_norms = matrix.ids[rows], matrix.inv_norms[rows]

    return cache.get(key, state, make, gather, 4 * matrix.dim + 12)
