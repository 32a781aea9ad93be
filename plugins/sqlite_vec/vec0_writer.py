"""Write new vectors into a vec0 table a whole block at a time, through its shadow tables.

An ``INSERT`` into a vec0 table places one vector: it finds the newest block ("chunk")
and its first free slot, opens the block's validity, rowids and vectors blobs and each
metadata column's blob, writes a few bytes into each, and records the slot in
``<table>_rowids``: ~5 us per 384-d vector, half of writing 10k vectors
(``benchmarks/results/ingest/2026-12-03-round7``). Vectors that fill new blocks are
written here as vec0 itself leaves them: per block one row in ``<table>_chunks``
(``size``, the ``validity`` bitmap with the first m bits set, ``rowids`` as m int64 and
zeros), one in ``<table>_vector_chunks00`` (the m float32 vectors, then zeros), one per
metadata column in ``<table>_metadatachunksNN`` (``kind``: 16 bytes a slot, the UTF-8
length as a native int then the first 12 bytes; ``created_at``: a native double a slot),
``kind`` texts longer than 12 bytes in ``<table>_metadatatext00``, and one row per vector
in ``<table>_rowids`` (``id`` NULL, its block and slot).

The layout belongs to sqlite-vec (read in its 0.1.9 source: ``vec0Update_Insert``,
``vec0_new_chunk``, ``vec0_write_metadata_value``), so this runs only for a sqlite-vec
whose :func:`vec_version` is in :data:`KNOWN_VERSIONS` and a table declared as
:meth:`~.arm.SqliteVecSemanticArm.bind` declares it; otherwise, and for vectors that go
into free slots of the newest block, the caller's ``INSERT`` does the work. A test
compares every shadow table, row by row, with what vec0's own inserts leave.
"""

from __future__ import annotations

import json
import re
import struct
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import apsw

if TYPE_CHECKING:
    import numpy as np

#: sqlite-vec versions whose insert this module reproduces (``SELECT vec_version()``).
KNOWN_VERSIONS = frozenset({"v0.1.9"})
#: The declaration :meth:`~.arm.SqliteVecSemanticArm.bind` writes (``sqlite_master.sql``).
_DECLARED = re.compile(
    r"USING vec0\(chunk_id INTEGER PRIMARY KEY, embedding float\[(\d+)\] "
    r"distance_metric=cosine, kind TEXT, created_at FLOAT, chunk_size=(\d+)\)$")
#: Bytes of a slot of a TEXT metadata block, and of text kept in it (vec0.c 0.1.9).
_TEXT_SLOT, _TEXT_KEPT = 16, 12
_NATIVE_INT = struct.Struct("=i")


def insert_new(
    tx: apsw.Connection, table: str, ids: Sequence[int], vectors: np.ndarray,
    fields: dict[int, tuple[str, float]],
) -> None:
    """Store vectors that no row of vec0 ``table`` holds, in order, as one vec0 ``INSERT``
    each would: those that go into free slots of the newest block by ``INSERT``, the rest
    by whole blocks (:func:`write_blocks`) when the table's layout is known, else by
    ``INSERT`` too.

    :param ids: distinct chunk ids, none in ``table``.
    :param vectors: ``(len(ids), dim)`` float32, C-contiguous, unit norm.
    :param fields: ``(kind, created_at)`` of every id (:func:`~.tables.chunk_fields`).
    """
    size = block_size(tx, table, vectors.shape[1])
    head = len(ids) if size is None else free_slots(tx, table, size)
    head = len(ids) if head is None else min(head, len(ids))
    if head:
        tx.executemany(f"INSERT INTO {table} (chunk_id, embedding, kind, created_at) "
                       "VALUES (?, ?, ?, ?)",
                       [(cid, vectors[i].tobytes(), *fields[cid]) for i, cid in
                        enumerate(ids[:head])])
    if size is not None and head < len(ids):
        rest = ids[head:]
        write_blocks(tx, table, size, rest, vectors[head:], [fields[cid][0] for cid in rest],
                     [fields[cid][1] for cid in rest])


def block_size(tx: apsw.Connection, table: str, dim: int) -> int | None:
    """Return the vectors per block of vec0 ``table`` when this module can write it: the
    running sqlite-vec is known and the table is declared as ``bind`` declares it with
    ``dim``; else ``None``."""
    if tx.execute("SELECT vec_version()").get not in KNOWN_VERSIONS or sys.byteorder != "little":
        return None
    sql = tx.execute("SELECT sql FROM sqlite_master WHERE name = ? AND type = 'table'",
                     (table,)).get
    found = _DECLARED.search(sql) if isinstance(sql, str) else None
    if found is None or int(found.group(1)) != dim:
        return None
    size = int(found.group(2))
    return size if size > 0 and size % 8 == 0 else None


def free_slots(tx: apsw.Connection, table: str, size: int) -> int | None:
    """Return how many slots of ``table``'s newest block are free (0 without a block), the
    slots vec0 fills before it starts a block; ``None`` when the block is not as expected."""
    row = tx.execute(f'SELECT size, validity FROM "{table}_chunks" ORDER BY chunk_id DESC '
                     "LIMIT 1").fetchone()
    if row is None:
        return 0
    held, validity = row
    if held != size or not isinstance(validity, bytes) or len(validity) != size // 8:
        return None
    return size - int.from_bytes(validity, "little").bit_count()


def write_blocks(
    tx: apsw.Connection, table: str, size: int, ids: Sequence[int], vectors: np.ndarray,
    kinds: Sequence[str], created: Sequence[float],
) -> None:
    """Write vectors that no row of ``table`` holds into new blocks of ``size``, in order,
    as that many vec0 ``INSERT`` s would once the newest block is full.

    :param ids: distinct chunk ids, none in ``table``.
    :param vectors: ``(len(ids), dim)`` float32, C-contiguous.
    :param kinds: each vector's ``kind`` metadata value (text).
    :param created: each vector's ``created_at`` metadata value (float seconds).
    """
    for start in range(0, len(ids), size):
        stop = min(start + size, len(ids))
        _write_block(tx, table, size, ids[start:stop], vectors[start:stop],
                     kinds[start:stop], created[start:stop])


def _write_block(
    tx: apsw.Connection, table: str, size: int, ids: Sequence[int], vectors: np.ndarray,
    kinds: Sequence[str], created: Sequence[float],
) -> None:
    import numpy as np

    m, empty = len(ids), size - len(ids)
    validity = (b"\xff" * (m // 8) + (bytes([(1 << (m % 8)) - 1]) if m % 8 else b"")).ljust(
        size // 8, b"\x00")
    rowids = np.asarray(ids, dtype=np.int64).tobytes() + bytes(8 * empty)
    tx.execute(f'INSERT INTO "{table}_chunks" (size, validity, rowids) VALUES (?, ?, ?)',
               (size, validity, rowids))
    block = tx.last_insert_rowid()
    tx.execute(f'INSERT INTO "{table}_vector_chunks00" (_rowid_, rowid, vectors) '
               "VALUES (?, ?, ?)", (block, block, vectors.tobytes() + bytes(vectors.nbytes
                                                                              // m * empty)))
    views = {}  # per distinct kind: its slot, and whether vec0 keeps it whole elsewhere
    for kind in set(kinds):
        text = kind.encode()
        views[kind] = (_NATIVE_INT.pack(len(text)) + text[:_TEXT_KEPT].ljust(_TEXT_KEPT, b"\x00"),
                       len(text) > _TEXT_KEPT)
    slots = b"".join([views[kind][0] for kind in kinds])
    for column, data in ((0, slots + bytes(_TEXT_SLOT * empty)),
                         (1, np.asarray(created, dtype=np.float64).tobytes() + bytes(8 * empty))):
        tx.execute(f'INSERT INTO "{table}_metadatachunks{column:02d}" (_rowid_, rowid, data) '
                   "VALUES (?, ?, ?)", (block, block, data))
    # json_each's key is the index in the array: the slot
    tx.execute(f'INSERT INTO "{table}_rowids" (rowid, id, chunk_id, chunk_offset) '
               "SELECT value, NULL, ?, key FROM json_each(?) ORDER BY key",
               (block, json.dumps(list(ids))))
    long = [(cid, kind) for cid, kind in zip(ids, kinds, strict=True) if views[kind][1]]
    if long:
        tx.executemany(f'INSERT INTO "{table}_metadatatext00" (rowid, data) VALUES (?, ?)', long)
