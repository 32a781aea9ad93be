"""Scoring only the rows a filter keeps: a gather from row-major vectors, block by block.

A filter keeping 10 % of 100k 384-d vectors leaves 10k rows to score. The column-major
matrix the unfiltered scan reads (:mod:`.matrix`) spreads each row over 384 cache
lines, so gathering rows from it touches the whole matrix (51 ms, more than the full
product); a row-major copy keeps each row in 1.5 KiB of consecutive bytes, and only those
are read. Measured at 100k x 384 (``benchmarks/results/peers/gather.py``, one BLAS
thread, 2 shared cores, load 3.9): the full column-major product, then dropping the
other rows, 19-24 ms at any share; this gather 1.4 / 9.2 / 16.0 ms for 3 / 10 / 20 % of
the rows. At 10k: 0.62-0.77 ms against 0.17 / 0.31 / 0.57 ms.

The rows are gathered :data:`BLOCK_ROWS` at a time into one buffer that stays in the
core's cache, and each block is scored there by BLAS ``gemv`` (``np.take(mode="clip")``:
with the default mode numpy buffers the copy, 46 against 8 ms at 10 % of 100k). Each
block is scored padded to a multiple of :data:`PAD_ROWS` rows: OpenBLAS's row-major
``sgemv_t`` sums four rows at a time and the rows of a last partial group in another
order, so without the padding the same vector could score a different last bit
depending on its place in the block.

A filter asked again (the same filters while neither copy changed: a conversation's
questions, a tag) need not gather again: :func:`gather` keeps its rows as one padded
array and :func:`scores_of` scores it block by block as :func:`gathered_scores` would,
so the scores are the same bits (:mod:`.subsets` keeps those arrays).
"""

from __future__ import annotations

import numpy as np

#: Rows gathered per block: 1,024 x 384 float32 is 1.5 MiB, about one core's L2 here.
#: Against 256-row blocks (same runs): 0.31 against 0.38 ms at 10 % of 10k, 3.6 against
#: 4.0 ms and 9.2 against 7.6 ms at 10 % of 100k (within the noise at 100k).
BLOCK_ROWS = 1024

#: Each block is scored as a multiple of this many rows (OpenBLAS ``sgemv_t`` works on
#: groups of 4 rows; measured: any other count scored the last 1-3 rows differently).
PAD_ROWS = 4


def gathered_scores(rows_major: np.ndarray, rows: np.ndarray, query: np.ndarray,
                    buffer: np.ndarray) -> np.ndarray:
    """Return ``rows_major[rows] @ query`` without materialising the gathered rows.

    :param rows_major: float32 ``(n, dim)``, C-contiguous (row-major).
    :param rows: int64 ``(m,)`` row numbers, each ``< n``.
    :param query: float32 ``(dim,)``.
    :param buffer: float32 ``(BLOCK_ROWS, dim)``, C-contiguous scratch space (its
        contents are overwritten; rows past a block's end only pad the product).
    :returns: float32 ``(m,)``, the dot products in the order of ``rows``; each the same
        bits whichever other rows are gathered with it.
    """
    m = len(rows)
    out = np.empty(m + PAD_ROWS, dtype=np.float32)
    for start in range(0, m, BLOCK_ROWS):
        part = rows[start:start + BLOCK_ROWS]
        size = len(part)
        padded = -(-size // PAD_ROWS) * PAD_ROWS
        np.take(rows_major, part, axis=0, out=buffer[:size], mode="clip")
        np.matmul(buffer[:padded], query, out=out[start:start + padded])
    return out[:m]


def new_buffer(dim: int) -> np.ndarray:
    """Return a zeroed float32 ``(BLOCK_ROWS, dim)`` scratch buffer for :func:`gathered_scores`
    (zeroed: the padding rows of a first short block are then zeros, never garbage)."""
    return np.zeros((BLOCK_ROWS, dim), dtype=np.float32)


def gather(rows_major: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Return ``rows_major[rows]`` as a new C-contiguous float32 array of
    ``ceil(m / PAD_ROWS) * PAD_ROWS`` rows, the rows past ``m`` zero (for :func:`scores_of`).

    :param rows_major: float32 ``(n, dim)``, C-contiguous. :param rows: int64 ``(m,)``.
    """
    m = len(rows)
    out = np.zeros((-(-m // PAD_ROWS) * PAD_ROWS, rows_major.shape[1]), dtype=np.float32)
    np.take(rows_major, rows, axis=0, out=out[:m], mode="clip")
    return out


def scores_of(gathered: np.ndarray, m: int, query: np.ndarray) -> np.ndarray:
    """Return the first ``m`` rows of ``gathered`` (from :func:`gather`) times ``query``:
    float32 ``(m,)``, bit for bit :func:`gathered_scores` of the same rows (the same
    blocks of :data:`BLOCK_ROWS`, each padded to :data:`PAD_ROWS`)."""
    if len(gathered) <= BLOCK_ROWS:  # one block: the same product, one call
        return np.matmul(gathered, query)[:m]
    out = np.empty(len(gathered), dtype=np.float32)
    for start in range(0, m, BLOCK_ROWS):
        end = start + (-(-min(BLOCK_ROWS, m - start) // PAD_ROWS) * PAD_ROWS)
        np.matmul(gathered[start:end], query, out=out[start:end])
    return out[:m]
