"""Write new vectors into a vec0 table through its shadow tables, a block at a time.

An ``INSERT`` into a vec0 table places one vector: it finds the newest block ("chunk")
and its first free slot, opens the block's validity, rowids and vectors blobs and each
metadata column's blob, writes a few bytes into each, and records the slot in
``<table>_rowids``: ~5 us per 384-d vector, half of writing 10k vectors
(``benchmarks/results/ingest/2026-12-03-round7``). New vectors are written here as vec0
itself leaves them. Those that fill new blocks (:func:`write_blocks`): per block one row
in ``<table>_chunks`` (``size``, the ``validity`` bitmap with the first m bits set,
``rowids`` as m int64 and zeros), one in ``<table>_vector_chunks00`` (the m float32
vectors, then zeros), one per metadata column in ``<table>_metadatachunksNN`` (``kind``: 16
bytes a slot, the UTF-8 length as a native int then the first 12 bytes; ``created_at``: a
native double a slot). Those that go into the free last slots of the newest block
(:func:`fill_tail`; an ingest embeds 64 texts a transaction, a block holds 256): one blob
write per column for all of them. Either way ``kind`` texts longer than 12 bytes go in
``<table>_metadatatext00`` and each vector gets its ``<table>_rowids`` row (``id`` NULL,
its block and slot).

The layout belongs to sqlite-vec (read in its 0.1.9 source: ``vec0Update_Insert``,
``vec0_new_chunk``, ``vec0_write_metadata_value``), so this runs only for a sqlite-vec
whose :func:`vec_version` is in :data:`KNOWN_VERSIONS` and a table declared as
:meth:`~.arm.SqliteVecSemanticArm.bind` declares it; otherwise, and for free slots of
the newest block that are not its last ones (vectors removed from it), the caller's
``INSERT`` does the work. A test compares every shadow table, row by row, with what
vec0's own inserts leave.
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
    each would: first into the free slots of the newest block (:func:`fill_tail` when
    they are the block's last slots, as they are unless vectors were removed from it; by
    ``INSERT`` otherwise), the rest by whole new blocks (:func:`write_blocks`); all of
    them by ``INSERT`` when the table's layout is not known.

    :param ids: distinct chunk ids, none in ``table``.
    :param vectors: ``(len(ids), dim)`` float32, C-contiguous, unit norm.
    :param fields: ``(kind, created_at)`` of every id (:func:`~.tables.chunk_fields`).
    """
    size = block_size(tx, table, vectors.shape[1])
    newest = None if size is None else newest_block(tx, table, size)
    if size is None or newest is None:
        _insert(tx, table, ids, vectors, fields)
        return
    block, used, tail = newest
    head = min(size - used, len(ids)) if block is not None else 0
    if head and tail and block is not None:
        fill_tail(tx, table, size, block, used, ids[:head], vectors[:head],
                  [fields[cid][0] for cid in ids[:head]], [fields[cid][1] for cid in ids[:head]])
    elif head:
        _insert(tx, table, ids[:head], vectors[:head], fields)
    if head < len(ids):
        rest = ids[head:]
        write_blocks(tx, table, size, rest, vectors[head:], [fields[cid][0] for cid in rest],
                     [fields[cid][1] for cid in rest])


def _insert(tx: apsw.Connection, table: str, ids: Sequence[int], vectors: np.ndarray,
            fields: dict[int, tuple[str, float]]) -> None:
    tx.executemany(f"INSERT INTO {table} (chunk_id, embedding, kind, created_at) "
                   "VALUES (?, ?, ?, ?)",
                   [(cid, vectors[i].tobytes(), *fields[cid]) for i, cid in enumerate(ids)])


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


def newest_block(
    tx: apsw.Connection, table: str, size: int
) -> tuple[int | None, int, bool] | None:
    """Return ``(id, slots used, free slots are the last ones)`` of ``table``'s newest block
    (``(None, 0, False)`` without one), the block vec0 fills before it starts another;
    ``None`` when the block is not as expected."""
    row = tx.execute(f'SELECT chunk_id, size, validity FROM "{table}_chunks" '
                     "ORDER BY chunk_id DESC LIMIT 1").fetchone()
    if row is None:
        return None, 0, False
    block, held, validity = row
    if held != size or not isinstance(validity, bytes) or len(validity) != size // 8:
        return None
    bits = int.from_bytes(validity, "little")
    used = bits.bit_count()
    return int(block), used, bits == (1 << used) - 1


def _validity(used: int, size: int) -> bytes:
    """The validity bitmap of a block of ``size`` whose first ``used`` slots hold vectors."""
    return ((1 << used) - 1).to_bytes(size // 8, "little")


def _kind_slots(ids: Sequence[int], kinds: Sequence[str]) -> tuple[bytes, list[tuple[int, str]]]:
    """Return the TEXT metadata slots of ``kinds`` and the ``(id, kind)`` of those vec0
    keeps whole in ``_metadatatext00`` (over 12 bytes)."""
    views = {}  # per distinct kind: its slot, and whether vec0 keeps it whole elsewhere
    for kind in set(kinds):
        text = kind.encode()
        views[kind] = (_NATIVE_INT.pack(len(text)) + text[:_TEXT_KEPT].ljust(_TEXT_KEPT, b"\x00"),
                       len(text) > _TEXT_KEPT)
    slots = b"".join([views[kind][0] for kind in kinds])
    return slots, [(cid, kind) for cid, kind in zip(ids, kinds, strict=True) if views[kind][1]]


def fill_tail(
    tx: apsw.Connection, table: str, size: int, block: int, used: int, ids: Sequence[int],
    vectors: np.ndarray, kinds: Sequence[str], created: Sequence[float],
) -> None:
    """Write vectors into the free slots ``used, used + 1, ...`` of ``block``, whose first
    ``used`` slots hold vectors and the rest none, as vec0 ``INSERT`` s would: one blob
    write per column for all of them (vec0 opens and writes each blob per vector).

    :param ids: distinct chunk ids, none in ``table``, at most ``size - used``.
    """
    import numpy as np

    slots, long = _kind_slots(ids, kinds)
    for name, column, offset, data in (
        ("chunks", "validity", 0, _validity(used + len(ids), size)),
        ("chunks", "rowids", 8 * used, np.asarray(ids, dtype=np.int64).tobytes()),
        ("vector_chunks00", "vectors", vectors.nbytes // len(ids) * used, vectors.tobytes()),
        ("metadatachunks00", "data", _TEXT_SLOT * used, slots),
        ("metadatachunks01", "data", 8 * used, np.asarray(created, dtype=np.float64).tobytes()),
    ):
        with tx.blob_open("main", f"{table}_{name}", column, block, True) as blob:
            blob.seek(offset)
            blob.write(data)
    _rowids(tx, table, block, used, ids)
    if long:
        tx.executemany(f'INSERT INTO "{table}_metadatatext00" (rowid, data) VALUES (?, ?)', long)


def _rowids(tx: apsw.Connection, table: str, block: int, first: int, ids: Sequence[int]) -> None:
    """Record that ``ids`` are in slots ``first, first + 1, ...`` of ``block``."""
    # json_each's key is the index in the array
    tx.execute(f'INSERT INTO "{table}_rowids" (rowid, id, chunk_id, chunk_offset) '
               "SELECT value, NULL, ?, key + ? FROM json_each(?) ORDER BY key",
               (block, first, json.dumps(list(ids))))


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
    rowids = np.asarray(ids, dtype=np.int64).tobytes() + bytes(8 * empty)
    tx.execute(f'INSERT INTO "{table}_chunks" (size, validity, rowids) VALUES (?, ?, ?)',
               (size, _validity(m, size), rowids))
    block = tx.last_insert_rowid()
    tx.execute(f'INSERT INTO "{table}_vector_chunks00" (_rowid_, rowid, vectors) '
               "VALUES (?, ?, ?)", (block, block, vectors.tobytes() + bytes(vectors.nbytes
                                                                              // m * empty)))
    slots, long = _kind_slots(ids, kinds)
    for column, data in ((0, slots + bytes(_TEXT_SLOT * empty)),
                         (1, np.asarray(created, dtype=np.float64).tobytes() + bytes(8 * empty))):
        tx.execute(f'INSERT INTO "{table}_metadatachunks{column:02d}" (_rowid_, rowid, data) '
                   "VALUES (?, ?, ?)", (block, block, data))
    _rowids(tx, table, block, 0, ids)
    if long:
        tx.executemany(f'INSERT INTO "{table}_metadatatext00" (rowid, data) VALUES (?, ?)', long)
