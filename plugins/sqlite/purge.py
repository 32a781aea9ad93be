"""Leaving no readable trace of deleted text in the store's files.

A forget (and every other deletion of a document: an import replacing one, a folder
ingest forgetting a file gone from its folder) deletes the rows in one write transaction.
SQLite would still keep copies of the text elsewhere in the files; each is removed before
the forget returns:

- freed cells and pages of ``chunks`` and ``documents``: every connection runs with
  ``PRAGMA secure_delete=ON`` (:func:`.connection.open_connection`), which zeroes them;
- FTS5's segments: the ``fts5`` arm's contentless table (``contentless_delete=1``) marks
  a deleted row with a tombstone and keeps its terms until its segment is merged (FTS5's
  ``secure-delete`` option does not apply to tombstones), so the arm has the index merged
  (``'optimize'``) once before the deleting transaction commits
  (:meth:`~.storage.SqliteStorage.before_commit`);
- vectors: sqlite-vec (0.1.9) zeroes a deleted vector in its block;
- the write-ahead log (``-wal``), which keeps the page images written until they are
  overwritten: after the commit, ``PRAGMA wal_checkpoint(TRUNCATE)`` copies the pages into
  the file and truncates the log to zero bytes (:func:`after_commit`);
- a file an older octomem wrote, without ``secure_delete``: its free space may hold text
  deleted or moved earlier, so the first purge rewrites it once (``VACUUM``);
- the snapshots of the in-RAM copies beside the file (``<file>.snapshots/``,
  :mod:`.snapshots`), written before the deletion: every one is removed after the commit.
  The ``meta`` key :data:`PURGED_KEY` records the change-log position of the deletion, so
  a snapshot another process was writing meanwhile, of an older state, is removed by its
  writer (:func:`stale`). Snapshots written later never hold deleted words: the postings'
  vocabulary and the filter index's code books are saved without entries no stored chunk
  uses.

What stays: the forget log (id, kind, sha256 of the text, times, reason), and whatever
the file system, the disk or a backup kept of earlier versions of the files.
"""

from __future__ import annotations

import logging
import shutil
import time
from pathlib import Path

import apsw

from . import changelog, snapshots

#: The :meth:`~.storage.SqliteStorage.before_commit` key of :func:`mark` (a transaction
#: that registered it is purged after its commit: :func:`after_commit`).
MARK = "purge-mark"
#: The ``meta`` key holding the change-log position of the newest deleting transaction.
PURGED_KEY = "purged_seq"

log = logging.getLogger(__name__)


def mark(tx: apsw.Connection) -> None:
    """Record, inside the deleting transaction ``tx`` (after its change-log rows), the
    change-log position a snapshot must be past to be free of the deleted text, and that
    this deletion is purged here (:data:`.schema.UNPURGED_KEY` cleared)."""
    from .schema import UNPURGED_KEY

    tx.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE "
               "SET value = excluded.value", (PURGED_KEY, str(changelog.last_seq(tx))))
    tx.execute("DELETE FROM meta WHERE key = ?", (UNPURGED_KEY,))


def catch_up(conn: apsw.Connection, db: Path) -> bool:
    """Purge, when the store opens, a deletion another writer committed without purging
    (:data:`.schema.UNPURGED_KEY` set: an older octomem, still running beside this one
    during an upgrade, forgot a statement; trial 20 L6): every FTS5 table of the file
    merged (``'optimize'``: its deleted rows' terms dropped), the file rewritten
    (``VACUUM``: that writer may not have zeroed freed pages), the write-ahead log
    truncated, every snapshot removed; then the key cleared. A step that cannot run now
    (another connection busy) is logged and the key kept, so the next open tries again.

    :param conn: a connection outside any transaction.
    :returns: True when a purge ran to its end.
    """
    from .schema import UNPURGED_KEY

    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (UNPURGED_KEY,)).fetchone()
        if row is None:
            return False
        log.warning("%s: text was deleted by a writer that did not purge it (an older "
                    "octomem?); purging it now", db)
        fts5 = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE "
            "'CREATE VIRTUAL TABLE % USING fts5(%'")]
        with conn:
            for table in fts5:
                conn.execute(f'INSERT INTO "{table}" ("{table}") VALUES (\'optimize\')')
        conn.execute("VACUUM")
        with conn:
            conn.execute("DELETE FROM meta WHERE key = ?", (UNPURGED_KEY,))
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except apsw.Error as exc:
        log.warning("%s: could not purge the text another writer deleted: %s; the next open "
                    "tries again", db, exc)
        return False
    remove_snapshots(db)
    return True


def purged_seq(conn: apsw.Connection) -> int:
    """Return the change-log position of the newest deletion (-1: none recorded)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (PURGED_KEY,)).fetchone()
    return -1 if row is None else int(row[0])


def stale(db: Path, seq: int) -> bool:
    """True when a snapshot of the state at change-log position ``seq`` predates a
    deletion (it may hold deleted text), read in a fresh read-only connection."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return purged_seq(conn) > seq
    except apsw.SQLError:  # no meta table: nothing was ever deleted
        return False
    finally:
        conn.close()


def after_commit(conn: apsw.Connection, db: Path) -> None:
    """Remove the traces a committed deletion left outside the tables: truncate the
    write-ahead log (after copying it into the file) and remove every snapshot.

    A checkpoint that other connections' open reads keep from finishing within the busy
    timeout is logged, not raised: the deletion itself is committed, and the next
    checkpoint (at the latest when the last connection closes) completes it.
    """
    try:
        busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        if busy:
            log.warning("%s: the write-ahead log still holds pages of the deleted text: "
                        "other connections were reading; it is copied and reset at the next "
                        "checkpoint", db)
    except apsw.Error as exc:
        log.warning("%s: could not checkpoint the write-ahead log after a deletion: %s", db, exc)
    remove_snapshots(db)
    _zero_old_free_space(conn, db)


def _zero_old_free_space(conn: apsw.Connection, db: Path) -> None:
    """Rewrite a file an older octomem wrote (``VACUUM``, once): before ``secure_delete``
    its free pages and cells kept the text of earlier deletions and of rows moved when
    pages split. A file created with ``secure_delete`` on is marked so
    (:data:`.schema.ZEROED_KEY`) and never rewritten. Cost: about a copy of the file, once."""
    from .schema import ZEROED_KEY

    if conn.execute("SELECT 1 FROM meta WHERE key = ?", (ZEROED_KEY,)).fetchone() is not None:
        return
    try:
        conn.execute("VACUUM")
        conn.execute("INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT(key) DO "
                     "UPDATE SET value = excluded.value", (ZEROED_KEY,))
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except apsw.Error as exc:
        log.warning("%s: could not rewrite the file written before secure_delete (VACUUM): "
                    "%s; its free space may still hold text deleted earlier", db, exc)


def remove_snapshots(db: Path) -> int:
    """Remove every snapshot of ``db`` (folders and pointers); a folder another process is
    still writing (``.tmp``, younger than :data:`~.snapshots.STALE_WORK_S`) is left to its
    writer, which checks :func:`stale` once it is written.

    :returns: how many entries were removed.
    """
    base = snapshots.folder(db)
    if not base.is_dir():
        return 0
    removed, now = 0, time.time()
    for entry in base.iterdir():
        try:
            if entry.is_dir():
                if entry.name.endswith(".tmp") and now - entry.stat().st_mtime < \
                        snapshots.STALE_WORK_S:
                    continue
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
            removed += 1
        except OSError as exc:
            log.warning("%s: could not remove the snapshot %s: %s", db, entry.name, exc)
    return removed
