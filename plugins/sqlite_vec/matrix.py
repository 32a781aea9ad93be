"""An in-RAM float32 copy of one ``sqlite-vec`` vector set, scanned exactly with numpy.

sqlite-vec's vec0 KNN reads its vectors through SQLite pages on every query; at 100k
384-d vectors that measured ~110-190 ms on 2 cores, against ~13-24 ms for one BLAS
``matrix @ query`` over the same vectors in RAM (scale curve,
``benchmarks/results/synthetic``). This module keeps that matrix: the vec0 table stays
the only truth (written in the storage's transactions), and the copy follows it
through the change log (:mod:`~octomem.plugins.sqlite.changelog`):

- the first search loads the whole set (:func:`~octomem.plugins.sqlite_vec.vec0_reader.read_all`,
  ~0.3 s per 100k 384-d vectors); the filters are the storage's business
  (:mod:`octomem.plugins.sqlite.filter_index` gives the scan its row mask);
- every later search first reads ``max(seq)`` of the log (one b-tree probe); when it
  moved, only the chunks logged since are re-read, in the same read transaction.

So a write committed by any process or thread is seen by the next search, a rolled-back
write never is, and nothing is written outside SQLite. Scores are exact cosine
similarities (the same as vec0's ``1 - distance``, up to float32 rounding).

While every search scans it, the matrix is column-major (Fortran order): BLAS then
reads it with its ``gemv_n`` kernel, which measured 8-11 ms for 100k x 384 on 2 cores
against 16 ms for the row-major ``gemv_t`` (``sum`` over the same bytes: 6 ms, the
bandwidth floor). A filter keeping fewer than :data:`GATHER_SHARE` of the rows is scored
on those rows only, gathered from a row-major copy (:mod:`.row_gather`; made by the first
such search, then kept in step). Past the projection threshold only the projected copy
is scanned and the full vectors are gathered by row, so the matrix becomes row-major
(and is its own row-major copy).

Scores are the same cosines either way up to float32 rounding: a gathered row's score
can differ from the full product's in its last bit (``gemv_t`` sums in another order
than ``gemv_n``), and it is the same whatever the filter keeps.

Memory: ``count * (dim * 4 + 8 + 4)`` bytes, e.g. ~150 MiB at 100k x 384, another
``count * dim * 4`` below the projection threshold for the row-major copy (made by a
selective filter's first search, or the first read of hits' vectors: every hybrid
search's dedup reads them; ~15 MiB at 10k), plus
``count * dims * 4`` for the projected copy past the threshold (~370 MiB at 1M x 96) and
``count * dims`` twice for its int8 codes and numkong's packed copy (~2 x 92 MiB).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import apsw
import numpy as np

from ..sqlite import snapshot_sync
from . import row_gather, vec0_reader
from .blas_threads import one_blas_thread  # the scans' context; scan.py imports it from here
from .matrix_snapshot import MatrixSnapshots
from .projection import Projection, top_rows
from .quantized import PackedCodes, QuantizedRows
from .top import select_top

#: Below the projection threshold, a mask keeping fewer than this share of the rows is
#: scored by gathering its rows from the row-major copy (:mod:`.row_gather`); a larger
#: one by the full column-major product, dropping the rest. Chosen below where the two
#: measured equal (``benchmarks/results/peers/gather.py``, one BLAS thread, 2 shared
#: cores, load 3.9): at 100k x 384 the gather took 9.2 / 16.0 / 22.1 ms for 10 / 20 /
#: 30 % of the rows against 19-24 ms for the product (crossing near 28 %); at 10k
#: 0.31 / 0.57 / 0.82 ms against 0.62-0.77 ms (crossing near 25 %).
GATHER_SHARE = 0.2
#: Past the projection threshold, a mask keeping fewer than ``count / GATHER_BELOW`` rows
#: is scored exactly by a gather; a larger one goes through the projection. Gathering
#: 1/32 of 1M row-major rows costs about what the projected scan does (~20 ms, 2 cores).
GATHER_BELOW = 32


#: Rows per block when copying row-major vectors into the column-major matrix (0.08 s
#: per 100k x 384 in blocks of 256 rows against 0.55 s in one copy, 2 cores).
_COPY_ROWS = 256


@dataclass(slots=True)
class ScanResult:
    """The top of one exact scan: ``ids`` (int64, ``(m,)``) and their cosine ``scores``
    (float32, ``(m,)``), best first, ties by ascending id."""

    ids: np.ndarray
    scores: np.ndarray


class VectorMatrix(MatrixSnapshots, QuantizedRows):
    """The vectors of one vec0 table as numpy arrays, kept in step with the table
    (starting from its snapshot beside the file when one matches: :mod:`.matrix_snapshot`).

    Thread-safe: :meth:`sync` and the scans hold one lock (a scan of 100k rows takes
    a few ms, so concurrent searches simply queue).

    :param table: the vec0 table of the vector set.
    :param dim: its vector dimension.
    :param reduce: ``(above, dims, candidates)``: once the set holds at least ``above``
        vectors, a search first ranks every allowed row by a ``dims``-dimensional
        projection (:class:`.projection.Projection`), then scores the best ``candidates`` exactly;
        ``None`` keeps every search exact.
    :param quantized: rank by the projection's int8 codes (:mod:`.quantized`) rather than
        its float32 rows (``approximate_scan``); the codes are kept beside them.
    """

    def __init__(self, table: str, dim: int, reduce: tuple[int, int, int] | None = None,
                 quantized: bool = False) -> None:
        self.table = table
        self.dim = int(dim)
        self.reduce = reduce
        self.quantized = quantized
        self.lock = threading.RLock()
        self.seq = -1  # -1: never loaded
        #: where its snapshots live (``db`` set by the arm; ``None``: none are used)
        self.snapshot = snapshot_sync.SnapshotState()
        self._clear()

    def _clear(self) -> None:
        self.count = 0
        self.ids = np.zeros(0, dtype=np.int64)
        self.matrix = np.zeros((0, self.dim), dtype=np.float32, order="F")
        self.inv_norms = np.zeros(0, dtype=np.float32)
        self._order: np.ndarray | None = None  # argsort of ids, None when stale
        self._sorted_ids = np.zeros(0, dtype=np.int64)  # ids[_order], set with it
        self.projection: Projection | None = None  # fitted once the set is large enough
        self.reduced = np.zeros((0, 0), dtype=np.float32, order="F")
        #: int8 codes of the unit projected rows and their per-dimension scale, once coded
        self.codes = np.zeros((0, 0), dtype=np.int8)
        self.scale: np.ndarray | None = None
        self.packed = PackedCodes()
        #: a row-major copy of :attr:`matrix` while that is column-major, made by the
        #: first selective search (:meth:`_rows_major`); ``None`` until then
        self.rowmajor: np.ndarray | None = None
        self._gather_buffer: np.ndarray | None = None

    def _columns(self) -> tuple[np.ndarray, ...]:
        """The per-row arrays, in step row for row."""
        extra = () if self.rowmajor is None else (self.rowmajor,)
        return (self.matrix, self.ids, self.inv_norms, self.reduced, self.codes, *extra)

    # -- keeping in step -------------------------------------------------------------

    def sync(self, conn: apsw.Connection, restore_only: bool = False) -> bool:
        """Bring the copy up to date with the committed state of the table.

        Reads the log and the changed rows inside one read transaction of ``conn``, so
        both come from the same state (:func:`.snapshot_sync.sync`: a copy never loaded
        starts from a matching snapshot).

        :param restore_only: never load the table whole (stay unloaded without a snapshot).
        :returns: True when the copy is loaded afterwards.
        """
        with self.lock, conn:
            return snapshot_sync.sync(self, conn, self.table, lambda: self._load_all(conn),
                                      lambda changed: self._apply(conn, changed), restore_only)

    def _load_all(self, conn: apsw.Connection) -> None:
        self._clear()
        exists = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (self.table,))
        if exists.fetchone() is None:
            return  # the set was dropped and not created again
        blocks = vec0_reader.read_all(conn, self.table, self.dim)
        self._reserve(sum(len(ids) for ids, _ in blocks))
        for ids, vectors in blocks:
            self._append(ids, vectors)
        if self.reduce is not None and self.count >= self.reduce[0]:
            self._fit_projection()  # now: the snapshot written after this load holds it

    def _reserve(self, rows: int) -> None:
        """Make room for ``rows`` rows in total (growing by 1.5x at least)."""
        if rows > self.matrix.shape[0]:
            cap = max(rows, int(self.matrix.shape[0] * 1.5) + 16)
            large = self.reduce is not None and rows >= self.reduce[0]
            fresh = self.matrix.shape[0] == 0  # a set loaded past the threshold: row-major
            self.matrix = _grow(self.matrix, cap, "C" if large and fresh else None)
            self.ids, self.inv_norms = _grow(self.ids, cap), _grow(self.inv_norms, cap)
            if self.rowmajor is not None:
                self.rowmajor = _grow(self.rowmajor, cap, "C")
            if self.projection is not None:
                self.reduced = _grow(self.reduced, cap)
            if self.scale is not None:
                self.codes = _grow(self.codes, cap, "C")

    def _append(self, ids: np.ndarray, vectors: np.ndarray) -> None:
        """Add rows for ``ids`` (int64 ``(m,)``) and ``vectors`` (float32 ``(m, dim)``)."""
        if not len(ids):
            return
        n, m = self.count, len(ids)
        self._reserve(n + m)
        for i in range(0, m, _COPY_ROWS):  # row blocks: a whole-array transposing copy is 6x slower
            j = min(i + _COPY_ROWS, m)
            self.matrix[n + i:n + j] = vectors[i:j]
        if self.rowmajor is not None:
            self.rowmajor[n:n + m] = vectors
        self.inv_norms[n:n + m] = 1.0 / np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
        self.ids[n:n + m] = ids
        if self.projection is not None:
            self.reduced[n:n + m] = self.projection.apply(vectors)
        if self.scale is not None:
            self._encode(n, n + m)
        self.count = n + m
        self._order = None

    def _apply(self, conn: apsw.Connection, changed: list[int]) -> None:
        """Re-read ``changed`` chunk ids: replace, add or drop their rows."""
        rows = conn.execute(
            f"SELECT chunk_id, embedding FROM {self.table} "
            "WHERE chunk_id IN (SELECT value FROM json_each(?))", (json.dumps(changed),)).fetchall()
        present = {int(cid): np.frombuffer(blob, dtype=np.float32) for cid, blob in rows}
        where = self.positions(np.asarray(changed, dtype=np.int64))
        gone = sorted((p for c, p in zip(changed, where, strict=True)
                       if p >= 0 and c not in present), reverse=True)
        replaced = [(int(p), c) for c, p in zip(changed, where, strict=True)
                    if p >= 0 and c in present]
        for pos, cid in replaced:
            self._set_row(pos, present.pop(cid))
        for pos in gone:  # highest first, so a row moved into a hole is never a later hole
            last = self.count - 1
            for arr in self._columns():
                if len(arr):
                    arr[pos] = arr[last]
            self.packed.touch(pos)
            self.count = last
        self._order = None
        new = [c for c in changed if c in present]
        if new:
            vectors = np.stack([present[c] for c in new])
            self._append(np.asarray(new, dtype=np.int64), vectors)

    def _set_row(self, pos: int, vector: np.ndarray) -> None:
        """Replace row ``pos``'s vector."""
        self.matrix[pos] = vector
        if self.rowmajor is not None:
            self.rowmajor[pos] = vector
        self.inv_norms[pos] = 1.0 / np.sqrt(np.dot(vector, vector))
        if self.projection is not None:
            self.reduced[pos] = self.projection.apply(vector[None, :])[0]
        if self.scale is not None:
            self._encode(pos, pos + 1)

    # -- reading ---------------------------------------------------------------------

    def positions(self, chunk_ids: np.ndarray) -> np.ndarray:
        """Return each id's row in the matrix, or -1 where it has no vector.

        :param chunk_ids: int64 ``(m,)``. :returns: int64 ``(m,)``.
        """
        ids = self.ids[:self.count]
        if self._order is None:  # the ids sorted kept with it (a 10k gather per call)
            self._order = np.argsort(ids, kind="stable")
            self._sorted_ids = ids[self._order]
        if not len(ids):
            return np.full(len(chunk_ids), -1, dtype=np.int64)
        sorted_ids = self._sorted_ids
        at = np.minimum(np.searchsorted(sorted_ids, chunk_ids), len(ids) - 1)
        found = sorted_ids[at] == chunk_ids
        return np.where(found, self._order[at], -1).astype(np.int64, copy=False)

    def vectors(self, chunk_ids: Sequence[int]) -> np.ndarray:
        """Return the stored vectors of ``chunk_ids``: float32 ``(m, dim)``, zero rows
        where a chunk has no vector.

        Gathered from the row-major copy (:meth:`_rows_major`, made by the first call
        while the matrix is column-major): a row is then 1.5 KB in a row instead of 384
        floats 4 * ``capacity`` bytes apart, and a search's 30 hit vectors, rows the scan
        has just pushed out of the caches, took 56 against 167 us (10k x 384, load 11);
        the same floats."""
        with self.lock:
            pos = self.positions(np.asarray(chunk_ids, dtype=np.int64).reshape(-1))
            out = np.zeros((len(pos), self.dim), dtype=np.float32)
            hit = pos >= 0
            out[hit] = self._rows_major()[pos[hit]]
            return out

    def top_k(self, query: np.ndarray, k: int, mask: np.ndarray | None,
              rows: np.ndarray | None = None, gathered: np.ndarray | None = None,
              exact: bool = False) -> ScanResult:
        """Cosine top ``k`` of ``query`` among the rows where ``mask`` is True.

        Exact, except on a set past the ``reduce`` threshold when ``exact`` is False and
        the mask is not selective: then the best ``candidates`` rows by the projection
        are scored exactly.

        :param query: float32 ``(dim,)``, non-zero.
        :param mask: bool ``(count,)`` or ``None`` for every row. A selective mask
            scores only its rows (a gather, then a smaller product).
        :param rows: ``np.flatnonzero(mask)`` (int64) when the caller kept it.
        :param gathered: :func:`.row_gather.gather` of those rows when the caller kept it
            (:mod:`.subsets`): scored without gathering, the same scores.
        :param exact: never use the projection (the arm's filtered searches).
        :returns: at most ``k`` ids and cosine similarities, best first.
        """
        with self.lock, one_blas_thread():  # the lock: one gather buffer per matrix
            return self._top_k(query, k, mask, rows, gathered, exact)

    def _top_k(self, query: np.ndarray, k: int, mask: np.ndarray | None,
               rows: np.ndarray | None = None, gathered: np.ndarray | None = None,
               exact: bool = False) -> ScanResult:
        n = self.count
        q = query / np.sqrt(query.dot(query))  # np.linalg.norm's value, without its checks
        if rows is None and mask is not None:
            rows = np.flatnonzero(mask)
        if rows is not None and gathered is not None:  # kept from an earlier search
            scores = row_gather.scores_of(gathered, len(rows), q)
            scores *= self.inv_norms[rows]
        elif rows is not None and self._gathers(len(rows), exact):  # selective: those rows
            if self._gather_buffer is None:
                self._gather_buffer = row_gather.new_buffer(self.dim)
            scores = row_gather.gathered_scores(self._rows_major(), rows, q, self._gather_buffer)
            scores *= self.inv_norms[rows]
        elif not exact and self._projected(k, n if rows is None else len(rows)):
            rows = self._candidates(q, k, mask)
            scores = (self.matrix[rows] @ q) * self.inv_norms[rows]
        else:
            scores = self.matrix[:n] @ q
            scores *= self.inv_norms[:n]  # in place: the same products, one array fewer
            if rows is not None:
                scores = scores[rows]
        ids, best = select_top(scores, self.ids[:n] if rows is None else self.ids[rows], k)
        return ScanResult(ids, best.astype(np.float32, copy=False))

    def _gathers(self, allowed: int, exact: bool = False) -> bool:
        """True when a mask keeping ``allowed`` rows is scored by a gather of those rows
        (``exact``: in a search that never uses the projection)."""
        if not exact and self.reduce is not None and self.count >= self.reduce[0]:
            return allowed * GATHER_BELOW < self.count
        return allowed < self.count * GATHER_SHARE

    def _rows_major(self) -> np.ndarray:
        """Return the vectors row-major: the matrix itself once it is, else its row-major
        copy (made now on first use: ~0.1 s per 100k x 384, then kept in step)."""
        if self.matrix.flags.c_contiguous:
            return self.matrix
        if self.rowmajor is None:
            self.rowmajor = _grow(self.matrix, self.matrix.shape[0], order="C")
        return self.rowmajor

    def _projected(self, k: int, allowed: int) -> bool:
        """True when this search goes through the projection (fitting it on first use)."""
        if self.reduce is None or self.count < self.reduce[0] or allowed <= self.reduce[2] + k:
            return False
        if self.projection is None:
            self._fit_projection()
            snapshot_sync.save(self)  # restored without it: the next process need not fit it
        elif self.quantized and self.codes.shape[1] != self._dims():
            self._quantize()  # a snapshot without codes (or of another width): code it
            snapshot_sync.save(self)
        return True

    def _fit_projection(self) -> None:
        """Fit the projection and project every row (~2-3 s at 1M x 384 on 2 cores)."""
        assert self.reduce is not None
        # the full vectors are now only gathered (candidates): row-major, a gather of
        # 1,000 rows takes 0.1 ms instead of 7.5 ms at 1M (2 cores)
        if not self.matrix.flags.c_contiguous:
            self.matrix = (_grow(self.matrix, self.matrix.shape[0], order="C")
                           if self.rowmajor is None else self.rowmajor)
        self.rowmajor = None  # the matrix is row-major now
        self.projection = Projection.fit(self.matrix[:self.count], self.reduce[1])
        self.reduced = np.zeros((self.matrix.shape[0], self.reduce[1]), np.float32, order="F")
        for i in range(0, self.count, 65_536):
            j = min(i + 65_536, self.count)
            self.reduced[i:j] = self.projection.apply(self.matrix[i:j])
        if self.quantized:
            self._quantize()

    def _candidates(self, q: np.ndarray, k: int, mask: np.ndarray | None) -> np.ndarray:
        """Rows of the best ``candidates + k`` allowed rows by projected cosine (int64); a
        wider projection (a snapshot's) is scanned by its first ``dims`` columns, the same
        eigenvectors as a ``dims``-wide fit (contiguous: column-major)."""
        assert self.projection is not None and self.reduce is not None
        n = self.count
        dims = self._dims()
        q_reduced = self.projection.apply(q[None, :])[0][:dims]
        if self.quantized and self.scale is not None and self.codes.shape[1] == dims:
            approx = self._code_scores(q_reduced, mask)
        else:
            approx = (self.reduced[:n, :dims] @ q_reduced) * self.inv_norms[:n]
            if mask is not None:
                approx[~mask] = -np.inf
        rows = top_rows(approx, self.reduce[2] + k)
        return rows if mask is None else rows[mask[rows]]


def _grow(arr: np.ndarray, rows: int, order: str | None = None) -> np.ndarray:
    """Return ``arr`` with room for ``rows`` rows, in ``order`` ("C"/"F"; default: kept)."""
    keep = "C" if arr.ndim == 2 and arr.flags.c_contiguous and not arr.flags.f_contiguous else "F"
    out = np.zeros((rows, *arr.shape[1:]), dtype=arr.dtype, order=order or keep)
    for i in range(0, len(arr), _COPY_ROWS):  # blocks: a transposing copy is slow whole
        j = min(i + _COPY_ROWS, len(arr))
        out[i:j] = arr[i:j]
    return out
