"""The ``sqlite-vec`` arm's search of its in-RAM copy (option ``scan`` "numpy" or a warmed
"warm"), and the query checks both of its paths share.

A search reads the change log's last position once and, when either in-RAM copy (the
vectors, :mod:`.matrix`; the filter columns, :mod:`octomem.plugins.sqlite.filter_index`)
is behind, syncs both in one read transaction, so a hit is never a chunk deleted in
between. A filter becomes matrix rows through :mod:`.subsets`; a filter asked again with
nothing written keeps its rows' vectors, chunk ids and inverse norms, and its search is
one product of those vectors, the scaling and the top ``k`` (:func:`kept_top`): the
filtered search at 10k, where the fixed costs are most of the time (one ``gemv`` of
1,000 x 384 is ~0.05 ms), skips the mask, the gathers and the matrix's general path.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from octomem.engine.errors import EmbedderMismatchError
from octomem.engine.types import Filters, Run, run_of

from ..sqlite import changelog, snapshot_sync
from . import row_gather
from .arm import NAME
from .matrix import one_blas_thread
from .subsets import Subset, SubsetCache, subset_of
from .top import select_top

if TYPE_CHECKING:
    import apsw

    from ..sqlite.commit_watch import CommitWatch
    from ..sqlite.filter_index import FilterIndex
    from .arm import SqliteVecSemanticArm
    from .matrix import VectorMatrix
    from .tables import VectorSet


def checked_query(vector: np.ndarray, bound: VectorSet) -> tuple[np.ndarray, np.float32] | None:
    """Return ``vector`` as C-contiguous float32 ``(dim,)`` with its L2 norm, ``None`` when
    it has no direction (zero or not finite).

    The norm is ``np.linalg.norm``'s (``sqrt`` of the float32 dot product), so a query
    divided by it is the same bits as before. A finite non-zero vector whose squared norm
    overflows or underflows float32 is first divided by its largest absolute component
    (cosines do not depend on the scale), instead of being scored as zeros or NaN.

    :param bound: the vector set searched.
    :raises EmbedderMismatchError: ``vector`` is not ``bound.dim`` long.
    """
    query = np.ascontiguousarray(vector, dtype=np.float32)
    if query.ndim != 1:
        query = query.reshape(-1)
    if query.shape != (bound.dim,):
        raise EmbedderMismatchError(
            f"query vector has shape {query.shape}, the bound vector set holds "
            f"{bound.dim}-dimensional vectors of {bound.model_id!r}"
        )
    squared = float(query.dot(query))
    if 0.0 < squared < math.inf:  # one dot product tells finite and non-zero
        # float32's correctly rounded sqrt, as np.sqrt's (the float64 root rounded to
        # float32: double rounding is exact for sqrt, 53 >= 2 * 24 + 2), ~1 us sooner
        return query, np.float32(math.sqrt(squared))
    if not np.isfinite(query).all() or not query.any():
        return None
    query = query / np.abs(query).max()
    return query, np.sqrt(query.dot(query))


def kept_top(subset: Subset, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the top ``k`` chunk ids (int64) and cosines (float32) among a kept subset's
    rows: the same ids and score bits as :meth:`.matrix.VectorMatrix.top_k` of those rows
    (the product of :func:`.row_gather.scores_of`, scaled by the same inverse norms).

    :param subset: with ``gathered``, ``ids`` and ``inv_norms`` kept.
    :param q: float32 ``(dim,)``, unit norm. Call holding the matrix's lock.
    """
    assert subset.gathered is not None and subset.ids is not None and subset.rows is not None
    with one_blas_thread():
        scores = row_gather.scores_of(subset.gathered, len(subset.rows), q)
    scores *= subset.inv_norms
    return select_top(scores, subset.ids, k)


def follow(conn: apsw.Connection, matrix: VectorMatrix, fields: FilterIndex,
           watch: CommitWatch) -> None:
    """Bring both in-RAM copies up to date with the store: one read of the change log's
    newest ``seq`` and, when either copy is behind, both synced in one read transaction
    (so a hit is never a chunk deleted in between). When both were current, ``watch``
    remembers the wal-index header read just before the log (:mod:`.commit_watch`), so
    that the next searches skip the read until something is committed; call holding the
    matrix's lock."""
    header = watch.header_now(conn)
    last = changelog.last_seq(conn)
    if not (snapshot_sync.current(matrix, last) and snapshot_sync.current(fields, last)):
        with conn:
            matrix.sync(conn)
            fields.sync(conn)
        header = None  # marked by the next search's read, once nothing moved
    watch.mark(header, (matrix.seq, fields.seq))


def scan(arm: SqliteVecSemanticArm, bound: VectorSet, query: np.ndarray, norm: np.float32,
         filters: Filters, k: int) -> Run:
    """Search ``bound``'s in-RAM copy: the ``k`` chunks passing ``filters`` nearest to
    ``query`` by cosine, exact (an unfiltered search past ``approximate_above`` may use
    the projection).

    :param query: float32 ``(dim,)`` and its ``norm`` from :func:`checked_query`.
    :returns: hits best first, ties by ascending chunk id.
    """
    conn = arm.storage.connection()
    matrix = arm._matrix_of(bound)
    fields = arm.storage.fields
    with matrix.lock:
        cache = arm._subsets.get(bound.table)
        if cache is None:
            cache = arm._subsets[bound.table] = SubsetCache(
                int(arm.options.filter_cache_mb * 2**20))
        if not cache.watch.unchanged(conn, (matrix.seq, fields.seq)):
            follow(conn, matrix, fields, cache.watch)
        subset = subset_of(cache, matrix, fields, filters)
        if subset.gathered is not None:  # a kept filter: its rows' product only
            ids, scores = kept_top(subset, query / norm, k)
        else:  # filtered: exact; unfiltered (the current-only rule at most): may project
            top = matrix.top_k(query, k, subset.mask, subset.rows, None,
                               exact=not filters.is_empty())
            ids, scores = top.ids, top.scores
    return run_of(ids.tolist(), scores.tolist(), NAME)  # Python ints and floats
