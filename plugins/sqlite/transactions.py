"""Write transactions of the ``sqlite`` storage: ``BEGIN IMMEDIATE`` (a savepoint when
nested), steps run just before the commit (:meth:`SqliteTransactions.before_commit`), and
the purge after a commit that deleted documents (:mod:`.purge`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw

from . import changelog, purge
from .checkpoints import Checkpointer
from .connection import FileId, gone, gone_error, locked, write_failed

Step = Callable[[apsw.Connection], None]


def _savepoint(conn: apsw.Connection) -> Iterator[apsw.Connection]:
    """Run a nested transaction block as a savepoint (the body of ``transaction()``)."""
    conn.execute("SAVEPOINT octomem_tx")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:  # SQLite rolls back the whole transaction itself after
            conn.execute("ROLLBACK TO octomem_tx")  # e.g. SQLITE_FULL in a multi-row insert:
            conn.execute("RELEASE octomem_tx")  # its savepoints are gone then
        raise
    conn.execute("RELEASE octomem_tx")


def _roll_back(conn: apsw.Connection) -> None:
    """Roll back ``conn``'s open transaction, if SQLite has not already (it does itself
    after e.g. ``SQLITE_FULL``)."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")


class SqliteTransactions:
    """The transaction methods of :class:`~.storage.SqliteStorage` (a mixin)."""

    path: Path
    busy_timeout_ms: int
    _local: threading.local
    #: the file the storage opened (:func:`.connection.file_id`); None until it is open
    opened_file: FileId | None = None
    checkpoints: Checkpointer  # the storage's checkpoint thread (:mod:`.checkpoints`)

    def connection(self) -> apsw.Connection:  # provided by SqliteStorage
        raise NotImplementedError

    @contextmanager
    def transaction(self) -> Iterator[apsw.Connection]:
        """Open a write transaction (``BEGIN IMMEDIATE``); a nested call uses a savepoint.

        Commits on normal exit and rolls back when the block raises.

        :returns: a context manager yielding the thread's apsw connection as ``tx``.
        :raises StoreLockedError: another process held the write lock past the busy
            timeout (an :class:`apsw.BusyError` too); names the file.
        :raises StoreReadOnlyError: a write in the block was refused because the file is
            read-only (SQLite opens such a file read-only: reads still work); nothing was
            written.
        :raises StoreWriteError: the disk (or the file's size limit) was full, or the
            operating system failed the write (``SQLITE_FULL``, ``SQLITE_IOERR``): rolled
            back, nothing was written; names the file.
        :raises StoreGoneError: the path no longer names the file the storage opened (it
            was deleted or replaced: a write would land in a file nobody can read again);
            nothing was written.
        """
        conn = self.connection()
        if conn.in_transaction:
            yield from _savepoint(conn)
            return
        why = gone(self.path, self.opened_file)  # one os.stat
        if why is not None:
            raise gone_error(why)
        try:
            conn.execute("BEGIN IMMEDIATE")
        except apsw.BusyError as exc:
            raise locked(self.path, self.busy_timeout_ms) from exc
        self._local.begun = conn.total_changes()  # rows written before it (chunk cache)
        self._local.pending = pending = {}
        try:
            logged = changelog.last_seq(conn)
            yield conn
            for step in pending.values():  # before_commit's steps, in registration order
                step(conn)
            changelog.seal(conn, logged)
        except BaseException as exc:
            self._local.pending = None
            _roll_back(conn)
            refused = write_failed(self.path, exc)
            if refused is not None:
                raise refused from exc
            raise
        self._local.pending = None
        try:
            conn.execute("COMMIT")
        except BaseException as exc:
            _roll_back(conn)
            refused = write_failed(self.path, exc)
            if refused is not None:
                raise refused from exc
            raise
        if purge.MARK in pending:
            with self.checkpoints.paused():  # its TRUNCATE must not find the thread's running
                purge.after_commit(conn, self.path)

    def before_commit(self, tx: apsw.Connection, key: str,
                      step: Step) -> None:
        """Run ``step(tx)`` once just before the calling thread's write transaction commits
        (a second call with the same ``key`` adds nothing), e.g. the ``fts5`` arm's merge
        after removals: once per transaction, not per document. Outside a transaction
        opened by :meth:`transaction`, ``step`` runs now.
        """
        pending: dict[str, Step] | None = getattr(
            self._local, "pending", None)
        if pending is None:
            step(tx)
        else:
            pending.setdefault(key, step)

