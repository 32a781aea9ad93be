"""The change log of the ``sqlite-vec`` vector sets and the ``fts5`` index: which chunk's
entry changed, in order.

Every write to a vector set (:meth:`SqliteVecSemanticArm.add
<octomem.plugins.sqlite_vec.arm.SqliteVecSemanticArm.add>`, ``remove``, ``reset``)
or to the FTS5 table (:meth:`Fts5KeywordArm.index
<octomem.plugins.fts5.arm.Fts5KeywordArm.index>`, ``remove``) appends one row per
touched chunk to ``vector_log`` *in the same transaction*, so the log and the index
commit or roll back together; ``table_name`` tells the indexes apart. An in-RAM copy
(:class:`~octomem.plugins.sqlite_vec.matrix.VectorMatrix`,
:class:`~octomem.plugins.fts5.postings.PostingIndex`) remembers the last ``seq`` it
has seen and re-reads only the chunks logged after it; a copy that fell behind the
pruned part of the log, or that sees its set dropped, reloads everything.

``seq`` is ``AUTOINCREMENT``: it never goes back, even after pruning, so "no row
after my ``seq``" always means "nothing changed".
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Sequence

import apsw

TABLE = "vector_log"
#: The ``table_name`` of the row that ends each write transaction's rows (:func:`seal`).
SEAL = "txn"
#: Rows kept after pruning. A reader more than this many changes behind reloads its
#: whole set (~1 s at 100k vectors), which is rarer than a write and cheaper than
#: replaying a longer log.
KEEP = 50_000

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {TABLE} (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    table_name TEXT NOT NULL,  -- the vec0 table of the vector set, or the FTS5 table
    chunk_id INTEGER           -- NULL: the whole set was dropped
)"""


def create(tx: apsw.Connection) -> None:
    """Create the log table if it is missing (inside the caller's transaction)."""
    tx.execute(SCHEMA)


def exists(conn: apsw.Connection) -> bool:
    """True when the log table exists in this database."""
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (TABLE,)).fetchone()
    return row is not None


def record(tx: apsw.Connection, table: str, chunk_ids: Sequence[int],
           stored: bool = False) -> None:
    """Log that the vectors of ``chunk_ids`` in ``table`` changed, then prune old rows.

    :param chunk_ids: touched chunk ids (added, replaced or removed alike).
    :param stored: every id is a row of ``chunks`` (the caller has just inserted it, or
        read it): a run of consecutive ascending ids is then logged by one ``INSERT ...
        SELECT`` of that range of ``chunks``' primary key, the same rows in the same order
        without a JSON array made and parsed (each of an ingest batch's two logs of 1,024
        new ids: ~0.2 ms of the writer's ~12, ``benchmarks/results/ingest/2026-12-04-round15``).
    """
    if not chunk_ids:
        return
    create(tx)
    ids = [int(c) for c in chunk_ids]
    if stored and ids[-1] - ids[0] == len(ids) - 1 and ids == list(range(ids[0], ids[-1] + 1)):
        tx.execute(f"INSERT INTO {TABLE} (table_name, chunk_id) SELECT ?, id FROM chunks "
                   "WHERE id BETWEEN ? AND ? ORDER BY id", (table, ids[0], ids[-1]))
    else:
        # one statement for the batch, rows in the given order (json_each reads the array
        # in order): a statement per row updated the AUTOINCREMENT counter per row (~5 % of
        # the SQL of a 10k ingest: two log rows per chunk)
        tx.execute(
            f"INSERT INTO {TABLE} (table_name, chunk_id) SELECT ?, value FROM json_each(?) "
            "ORDER BY key", (table, json.dumps(ids)))
    _prune(tx)


def seal(tx: apsw.Connection, since: int) -> None:
    """End a write transaction that logged rows after ``since`` with one more row,
    ``(SEAL, a random 63-bit number)``, so that a log position names one history, not
    only a count of rows (:mod:`.snapshots` trusts a snapshot whose position holds the row
    it recorded). Without it a backup restored over the store and then written to
    reused the same positions with the same ``(table, chunk id)`` rows, and the snapshots
    of the state before the restore were taken as current: a search answered with the
    vector and postings of a statement the restored file no longer held (trial 20 L2).
    Readers of one table's changes never see these rows. Nothing is written when the
    transaction logged nothing, or the log does not exist.

    :param since: the newest ``seq`` when the transaction began (:func:`last_seq`).
    """
    if last_seq(tx) > since:  # read first: an INSERT of no row still needs a writable file
        tx.execute(f"INSERT INTO {TABLE} (table_name, chunk_id) VALUES (?, ?)",
                   (SEAL, secrets.randbits(63)))


def record_drop(tx: apsw.Connection, table: str) -> None:
    """Log that the whole vector set ``table`` was dropped."""
    create(tx)
    tx.execute(f"INSERT INTO {TABLE} (table_name, chunk_id) VALUES (?, NULL)", (table,))
    _prune(tx)


def _prune(tx: apsw.Connection) -> None:
    tx.execute(
        f"DELETE FROM {TABLE} WHERE seq <= (SELECT max(seq) FROM {TABLE}) - ?", (KEEP,))


def last_seq(conn: apsw.Connection) -> int:
    """Return the newest ``seq`` (0 when nothing was ever logged or the table is missing)."""
    try:  # one statement: every in-RAM copy asks on every search
        seq = conn.execute(f"SELECT max(seq) FROM {TABLE}").get  # one row, one value
    except apsw.SQLError:
        if exists(conn):
            raise
        return 0
    return int(seq or 0)


def changes_since(conn: apsw.Connection, table: str, seq: int) -> list[int | None] | None:
    """Return the chunk ids of ``table`` logged after ``seq`` (``None`` = set dropped).

    :returns: ids in log order, duplicates removed; ``None`` when the rows after ``seq``
        are no longer all in the log (pruned), so the caller must reload everything.
    """
    if not exists(conn):
        return None
    first = conn.execute(f"SELECT min(seq) FROM {TABLE}").fetchone()[0]
    if first is None or int(first) > seq + 1:
        return None
    rows = conn.execute(
        f"SELECT chunk_id FROM {TABLE} WHERE seq > ? AND table_name = ? ORDER BY seq",
        (int(seq), table))
    return list(dict.fromkeys(r[0] for r in rows))


def follow(
    conn: apsw.Connection, table: str, seq: int,
    reload: Callable[[], None], apply: Callable[[list[int]], None],
) -> int:
    """Bring an in-RAM copy of ``table`` that has seen the log up to ``seq`` up to date.

    :param seq: the last ``seq`` the copy has seen; -1 when it was never loaded.
    :param reload: loads the whole copy again (never loaded, fell behind the pruned
        log, or the set was dropped).
    :param apply: re-reads the chunk ids logged since ``seq`` (in log order).
    :returns: the ``seq`` the copy has now seen.
    """
    last = last_seq(conn)
    if last == seq:
        return seq
    changed = None if seq < 0 else changes_since(conn, table, seq)
    if changed is None or None in changed:
        reload()
    elif changed:
        apply([int(c) for c in changed if c is not None])
    return last

