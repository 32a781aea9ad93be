"""Read every vector of a vec0 table at once, through its shadow tables when their layout is known.

A ``SELECT chunk_id, embedding FROM <vec0 table>`` returns one row per vector through
the virtual-table interface: ~1.5 s per 100k 384-d vectors on 2 cores. sqlite-vec
0.1.x stores vectors in blocks ("chunks") of up to 1024: ``<table>_chunks`` holds each
block's ``size``, a ``validity`` bitmap (bit ``i`` of byte ``i // 8``, least
significant first, set when slot ``i`` holds a vector) and ``rowids`` (``size`` int64);
``<table>_vector_chunks00`` holds the block's vectors (``size * dim`` float32, keyed by
the block id). Reading those blobs directly measured 0.34 s for the same 100k vectors.

The layout belongs to sqlite-vec, not to us, so :func:`read_all` checks it (blob sizes,
and the count of valid slots against ``<table>_rowids``) and falls back to the public
query whenever anything does not match.
"""

from __future__ import annotations

import apsw
import numpy as np


def read_all(conn: apsw.Connection, table: str, dim: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Return every vector stored in the vec0 ``table`` as blocks ``(chunk_ids, vectors)``.

    :param dim: the table's dimension (float32 vectors).
    :returns: blocks of int64 ``(m,)`` ids and float32 ``(m, dim)`` vectors (read-only
        views of the blobs where possible), in storage order; ids are distinct.
    """
    try:
        fast = _read_shadow(conn, table, dim)
    except apsw.SQLError:  # a shadow table is missing or has other columns
        fast = None
    return fast if fast is not None else [_read_public(conn, table, dim)]


def _read_public(conn: apsw.Connection, table: str, dim: int) -> tuple[np.ndarray, np.ndarray]:
    rows = conn.execute(f"SELECT chunk_id, embedding FROM {table}").fetchall()
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    vectors = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
    return ids, vectors.reshape(len(rows), dim)


def _read_shadow(
    conn: apsw.Connection, table: str, dim: int
) -> list[tuple[np.ndarray, np.ndarray]] | None:
    blocks: list[tuple[np.ndarray, np.ndarray]] = []
    for size, validity, rowids, vectors in conn.execute(
        f"SELECT c.size, c.validity, c.rowids, v.vectors FROM {table}_chunks AS c "
        f"JOIN {table}_vector_chunks00 AS v ON v.rowid = c.chunk_id ORDER BY c.chunk_id"
    ):
        size = int(size)
        if (len(validity) * 8 < size or len(rowids) != size * 8
                or len(vectors) != size * dim * 4):
            return None
        keep = np.unpackbits(np.frombuffer(validity, np.uint8), bitorder="little")[:size]
        ids = np.frombuffer(rowids, np.int64)
        block = np.frombuffer(vectors, np.float32).reshape(size, dim)
        if not keep.all():
            ids, block = ids[keep.astype(bool)], block[keep.astype(bool)]
        if len(ids):
            blocks.append((ids, block))
    expected = conn.execute(f"SELECT count(*) FROM {table}_rowids").fetchone()[0]
    if sum(len(ids) for ids, _ in blocks) != int(expected):
        return None
    return blocks
