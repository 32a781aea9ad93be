"""int8 codes of the projected vectors, the copy the approximate stage scans past
``approximate_above`` (``approximate_scan = "int8"``).

The float32 projection of 1M vectors to 96 dimensions is 384 MB, read whole by every
unfiltered search; its time follows the bytes (``benchmarks/results/synthetic/2026-12-02/
maxscore``). numpy has no int8 matrix-vector product, so the codes are scanned by
numkong's packed int8 kernel (``dots_pack`` / ``dots_packed``): 96 MB per search, scored
in integers, exactly (the products of int8 codes summed in int32 are the same in any
kernel or order).

- a row's code is ``round(x_j * scale_j)`` of its *unit* projected vector ``x`` (the
  projected row times the row's inverse norm), clipped to [-127, 127];
  ``scale_j = 127 / max |x_j|`` over the rows coded when the scale was fitted (rows added
  later with a larger component are clipped: only their candidate score moves);
- a query's code is ``round(c * q_j / scale_j)`` with one factor ``c`` mapping its largest
  component to 127, so ``codes @ query_code`` is ``c * (x . q)`` up to rounding: the
  same order as the projected cosine, which picks the candidates that are then scored
  exactly.

numkong's packed form is not an array (it cannot be memory-mapped from a snapshot, nor
changed in place), so :class:`PackedCodes` packs the codes once (~0.15-0.35 s at 1M x 96
on 2 cores) and then scores the rows written since (the rows past the packed ones, and
packed rows that were replaced or moved) with numpy, until they are
:data:`REPACK_SHARE` of the rows and it packs again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

#: The largest code (int8, symmetric: -127 .. 127).
CODE_MAX = 127
#: Once the rows written since the packing (scored with numpy's int32 product, ~20x
#: slower per row than the packed kernel) are this share of all rows, the next search packs
#: the codes again: at 1M, 1/64 = ~15.6k rows is ~3 ms of numpy against ~0.2 s of packing,
#: so a search after 64 small writes does not pay the packing each time.
REPACK_SHARE = 1 / 64
#: Rows coded per block (bounds the float32 temporaries to ~25 MB at 96 dimensions).
_BLOCK = 65_536


def fit_scale(reduced: np.ndarray, inv_norms: np.ndarray) -> np.ndarray:
    """Per-dimension scale ``127 / max |x_j|`` over the unit projected rows ``x``.

    :param reduced: float32 ``(n, dims)`` projected rows (not unit).
    :param inv_norms: float32 ``(n,)``, each row's full vector's inverse norm.
    :returns: float32 ``(dims,)``, finite and > 0 (a dimension that is 0 everywhere gets 1).
    """
    peak = np.zeros(reduced.shape[1], dtype=np.float32)
    for i in range(0, len(reduced), _BLOCK):  # blocks: never all unit rows at once
        j = min(i + _BLOCK, len(reduced))
        unit = np.asarray(reduced[i:j], dtype=np.float32) * inv_norms[i:j, None]
        np.maximum(peak, np.abs(unit).max(axis=0), out=peak)
    return np.where(peak > 0, CODE_MAX / np.maximum(peak, 1e-30), 1.0).astype(np.float32)


def encode(reduced: np.ndarray, inv_norms: np.ndarray, scale: np.ndarray,
           out: np.ndarray | None = None) -> np.ndarray:
    """Code projected rows.

    :param reduced: float32 ``(m, dims)`` projected rows (not unit).
    :param inv_norms: float32 ``(m,)``, each row's full vector's inverse norm.
    :param scale: float32 ``(dims,)`` from :func:`fit_scale`.
    :param out: int8 ``(m, dims)`` written in place when given.
    :returns: int8 ``(m, dims)`` codes.
    """
    if out is None:
        out = np.empty(reduced.shape, dtype=np.int8)
    for i in range(0, len(reduced), _BLOCK):
        j = min(i + _BLOCK, len(reduced))
        block = np.asarray(reduced[i:j], dtype=np.float32) * (inv_norms[i:j, None] * scale)
        np.clip(np.rint(block, out=block), -CODE_MAX, CODE_MAX, out=block)
        out[i:j] = block
    return out


def encode_query(q_reduced: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """Code a projected query (float32 ``(dims,)``) for the codes' product: int8 ``(dims,)``."""
    scaled = np.asarray(q_reduced, dtype=np.float64) / scale
    peak = float(np.abs(scaled).max())
    if peak == 0.0:
        return np.zeros(len(scaled), dtype=np.int8)
    return np.clip(np.rint(scaled * (CODE_MAX / peak)), -CODE_MAX, CODE_MAX).astype(np.int8)


class PackedCodes:
    """numkong's packed form of the first :attr:`rows` codes, and the rows written since.

    The owner calls :meth:`touch` for every row position it writes (an added row, a
    replaced vector, a row moved into a deleted one's place) and :meth:`scores` to scan.
    Not thread-safe: the owner's lock covers it.
    """

    def __init__(self) -> None:
        self.packed: Any = None  # numkong.PackedMatrix of codes[:rows]
        self.rows = 0
        self.dirty: set[int] = set()  # positions < rows written since the packing
        self.packs = 0  # times packed (tests count them)

    def reset(self) -> None:
        """Forget the packing (the codes were replaced whole)."""
        self.packed, self.rows, self.dirty = None, 0, set()

    def touch(self, start: int, stop: int | None = None) -> None:
        """Note that rows ``start`` (to ``stop``, exclusive) were written."""
        stop = start + 1 if stop is None else stop
        if self.packed is not None and start < self.rows:
            self.dirty.update(range(start, min(stop, self.rows)))

    def pack(self, codes: np.ndarray, count: int) -> None:
        """Pack ``codes[:count]`` (int8 ``(count, dims)``, row-major)."""
        import numkong

        self.packed = numkong.dots_pack(np.ascontiguousarray(codes[:count]))
        self.rows, self.dirty = count, set()
        self.packs += 1

    def stale(self, count: int) -> bool:
        """True when the next scan should pack first (never packed, or the rows written
        since reach :data:`REPACK_SHARE` of ``count``)."""
        if self.packed is None:
            return True
        return len(self.dirty) + max(count - self.rows, 0) > count * REPACK_SHARE

    def scores(self, codes: np.ndarray, count: int, query: np.ndarray) -> np.ndarray:
        """``codes[:count] @ query`` in int32, the packed rows by numkong, the rest by numpy.

        :param codes: int8 ``(>= count, dims)``, row-major.
        :param query: int8 ``(dims,)`` from :func:`encode_query`.
        :returns: int32 ``(count,)``; the same integers whatever was packed when.
        """
        import numkong

        if self.stale(count):
            self.pack(codes, count)
        head = min(self.rows, count)
        packed = np.asarray(numkong.dots_packed(query[None, :], self.packed))[0]
        if head == count and not self.dirty:
            return packed  # nothing written since the packing (a 4 MB copy saved at 1M)
        out = np.empty(count, dtype=np.int32)
        out[:head] = packed[:head]
        q32 = query.astype(np.int32)
        if count > head:
            out[head:] = codes[head:count].astype(np.int32) @ q32
        if self.dirty:
            rows = np.fromiter((r for r in self.dirty if r < count), dtype=np.int64)
            out[rows] = codes[rows].astype(np.int32) @ q32
        return out


class QuantizedRows:
    """The codes' side of :class:`~.matrix.VectorMatrix` (a mixin: it reads and sets the
    matrix's fields; the matrix calls :meth:`_encode` for every row it writes)."""

    reduce: tuple[int, int, int] | None
    count: int
    reduced: np.ndarray
    inv_norms: np.ndarray
    codes: np.ndarray
    scale: np.ndarray | None
    packed: PackedCodes
    quantized: bool
    lock: threading.RLock

    _projected: Callable[[int, int], bool]  # the matrix's (an annotation: no stub)
    _rows_major: Callable[[], np.ndarray]  # the matrix's

    def ready(self) -> None:
        """Make the approximate stage ready now, as the first unfiltered search would: the
        projection fitted or coded when missing, the codes packed (a long-running
        process's warm-up: its first search then scans at once). Below
        ``approximate_above``: the row-major copy hits' vectors are read from."""
        with self.lock:
            if self._projected(0, self.count):
                self._pack()
            elif self.count:
                self._rows_major()  # hits' vectors are gathered from it (matrix.vectors)

    def _pack(self) -> None:
        """Pack the codes when an int8 scan would pack them first (call holding the lock)."""
        if (self.quantized and self.scale is not None and self.codes.shape[1] == self._dims()
                and self.packed.stale(self.count)):
            self.packed.pack(self.codes, self.count)

    def _dims(self) -> int:
        """Projected dimensions scanned: ``approximate_dims``, at most the projection's."""
        assert self.reduce is not None
        return min(self.reduce[1], self.reduced.shape[1])

    def _quantize(self) -> None:
        """Fit the codes' scale on every row and code them (~0.3 s at 1M x 96, 2 cores)."""
        dims = self._dims()
        self.scale = fit_scale(self.reduced[:self.count, :dims], self.inv_norms[:self.count])
        self.codes = np.zeros((self.reduced.shape[0], dims), dtype=np.int8)
        self.packed.reset()
        self._encode(0, self.count)

    def _encode(self, start: int, stop: int) -> None:
        """Code rows ``start:stop`` from their projected rows (after those are set)."""
        assert self.scale is not None
        dims = self.codes.shape[1]
        encode(self.reduced[start:stop, :dims], self.inv_norms[start:stop], self.scale,
               out=self.codes[start:stop])
        self.packed.touch(start, stop)

    def _code_scores(self, q_reduced: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
        """The rows' code products with the projected query (float32 ``(dims,)``): int32
        ``(count,)``, rows outside ``mask`` (bool ``(count,)``) below every other."""
        assert self.scale is not None
        approx = self.packed.scores(self.codes, self.count, encode_query(q_reduced, self.scale))
        if mask is not None:
            approx[~mask] = np.iinfo(np.int32).min + 1  # negatable
        return approx
