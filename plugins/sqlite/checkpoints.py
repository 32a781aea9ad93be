"""WAL checkpoints in a thread of their own, not in the committing one.

By default SQLite checkpoints the write-ahead log in the connection whose commit brings the
log to 1,000 pages or more (``wal_autocheckpoint``): that commit copies the log's pages into
the database file and, on a disk, waits for two fsyncs before the writer can go on. An
ingest writes ~3,200 pages of rows and FTS5 and ~3,700 of vectors per 10k chunks, so its
commits took several such checkpoints on the write path: round 11 of issue 15's ingest
(``benchmarks/results/ingest/2026-12-03-round11``) measured the vectors of the 10k ingest
at 0.05 s on tmpfs and 0.1-0.2 s on disk, all of the difference in those checkpoints.

Here every connection of the storage gets a WAL hook instead (``sqlite3_wal_hook``, which
replaces the automatic checkpoint): a commit that leaves the log at
:data:`CHECKPOINT_PAGES` pages or more only wakes the storage's checkpoint thread, which
runs ``PRAGMA wal_checkpoint(PASSIVE)`` on a connection of its own while the writer goes
on. That is the checkpoint SQLite would have run (it copies what no reader still needs and
waits for no lock; the next writer starts the log over once all of it is copied), with
the same durability (``synchronous=NORMAL``: the log is synced before the file is
written). The thread starts at the first such commit and ends when the storage closes.

While a writer keeps committing, the log cannot start over (a checkpoint finishes only
after the writer has appended more), so it grows; a commit that leaves it at
:data:`CHECKPOINT_LIMIT` pages checkpoints in the committing thread, as SQLite would have,
after the thread's checkpoint under way. A ``TRUNCATE`` checkpoint that must empty the log
(:mod:`.purge`, after a deletion) runs inside :meth:`Checkpointer.paused`, so it never
finds the thread's checkpoint running (it would answer "busy" and leave the log). The
thread checkpoints nothing once the file at the storage's path is no longer the one it opened
(:func:`.connection.gone`): a file put in its place must not receive the old one's pages.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw

#: Log pages after a commit that wake the checkpoint thread: SQLite's own default
#: ``wal_autocheckpoint`` (https://sqlite.org/pragma.html#pragma_wal_autocheckpoint).
CHECKPOINT_PAGES = 1000

#: Log pages after a commit at which the committing thread checkpoints itself: the log of a
#: long bulk write stays under ~40 MiB (4 KiB pages) plus one transaction.
CHECKPOINT_LIMIT = 10_000

log = logging.getLogger(__name__)


class Checkpointer:
    """Checkpoint one database file's WAL in a background thread when its commits ask.

    :param path: the database file.
    :param gone: says why the path no longer names the file the storage opened, or
        ``None`` (:meth:`~.storage.SqliteStorage.gone`).
    """

    def __init__(self, path: Path, gone: Callable[[], str | None]) -> None:
        self.path = path
        self._gone = gone
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False
        # held while a checkpoint runs; re-entrant: a commit inside paused() (purge's VACUUM
        # of an older file) may reach CHECKPOINT_LIMIT and checkpoint in the same thread
        self._running = threading.RLock()
        #: checkpoints run so far, and the last one's ``(busy, log pages, pages copied)``
        self.runs = 0
        #: requests not served because the path names another file now
        self.skipped = 0
        self.last: tuple[int, int, int] | None = None

    def hook(self, conn: apsw.Connection, _name: str, pages: int) -> int:
        """The connections' WAL hook: called after each commit with the log's size in
        pages; wakes the thread at :data:`CHECKPOINT_PAGES` or more, checkpoints in the
        committing thread at :data:`CHECKPOINT_LIMIT` or more.

        :returns: ``SQLITE_OK`` (the commit stands whatever happens here).
        """
        if pages >= CHECKPOINT_LIMIT:
            try:
                with self._running:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            except apsw.Error as exc:  # the next commit tries again
                log.warning("checkpoint of %s failed: %s", self.path, exc)
        elif pages >= CHECKPOINT_PAGES:
            try:
                self.request()
            except RuntimeError as exc:  # no thread can start: the next commit asks again
                log.warning("cannot start the checkpoint thread of %s: %s", self.path, exc)
        return apsw.SQLITE_OK

    def request(self) -> None:
        """Ask for a checkpoint soon (the thread is started on the first request)."""
        with self._lock:
            if self._closed:
                return
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="octomem-checkpoint",
                                                daemon=True)
                self._thread.start()
        self._wake.set()

    def _run(self) -> None:
        conn: apsw.Connection | None = None
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._closed:
                    return
                if self._gone() is not None:
                    self.skipped += 1
                    continue
                try:
                    if conn is None:  # never creates the file
                        conn = apsw.Connection(str(self.path), flags=apsw.SQLITE_OPEN_READWRITE)
                    with self._running:
                        busy, pages, copied = conn.execute(
                            "PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                    self.last, self.runs = (busy, pages, copied), self.runs + 1
                except apsw.Error as exc:  # the next request tries again, on a new connection
                    log.warning("background checkpoint of %s failed: %s", self.path, exc)
                    if conn is not None:
                        conn.close()
                    conn = None
        finally:
            if conn is not None:
                conn.close()

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Hold off the thread's checkpoints (waiting for the one under way) inside the
        block: for a checkpoint of the caller's own that must not find it running."""
        with self._running:
            yield

    def close(self) -> None:
        """Stop the thread (after the checkpoint it is running, if any) and close its
        connection; later requests are ignored."""
        with self._lock:
            self._closed = True
            thread = self._thread
        self._wake.set()
        if thread is not None:
            thread.join()
