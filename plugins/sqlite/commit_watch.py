"""Telling, without running a statement, that nothing was committed to a store since a
search last read the change log.

Every in-RAM copy (vectors, filter columns, postings) asks the change log for its newest
``seq`` on every search (:func:`.changelog.last_seq`), so that a write committed by any
connection of any process is seen by the next search. That read is one statement: 2 us
when SQLite's code and pages are in the caches, ~20 us when other work between two
searches has pushed them out (a tenth of a kept filter's vector search at 10k, in the peers
harness's interleaved order: ``benchmarks/results/peers/arms-10k-100k.md``).

A store is in WAL mode (:mod:`.connection`), and a WAL-mode file keeps its wal-index in
``<file>-shm``, which every connection of every process maps. Its first 48 bytes are the
wal-index header, which every commit rewrites before it returns: ``iChange`` is
"incremented with each transaction", ``mxFrame`` is the last valid frame, and a WAL reset
draws new salts (https://www.sqlite.org/walformat.html, 2.2.1 "The WAL-Index Header").
So when those 48 bytes are what they were just before a change-log read that found both
copies current, nothing was committed since, by anyone, and the read can be skipped.
Reading them is one ``memcpy`` from a read-only map of the file (~0.1 us).

Safe because the map is only trusted through the connection that made the mark, while it
is open and outside a transaction: an open connection that has read the file holds
SQLite's shared "dead man switch" lock on ``-shm`` and keeps it mapped, so no connection
truncates, deletes or replaces that file meanwhile (the first connection to open a file
with no other connection truncates it; the last to close deletes it), and the file is
the one SQLite itself uses (opened by the name SQLite gives it, after that connection read
through it). Writes of that connection inside an uncommitted transaction do not move the
header: a connection in a transaction always reads the log. A store not in WAL mode, a
missing or short ``-shm`` file, or any error opening it leaves the watch without a map:
every search then reads the log, as before.
"""

from __future__ import annotations

import mmap
import os
from typing import Any

import apsw

#: Bytes of the wal-index header (the first of its two copies; writers write the second
#: copy first, then this one: walformat.html 2.2.1).
HEADER = 48


class CommitWatch:
    """The wal-index header of one store file, remembered at the last change-log read
    that found the in-RAM copies current.

    Not thread-safe on its own: call it holding the lock of the copies it vouches for.
    """

    __slots__ = ("conn", "token", "header", "_map", "_file")

    def __init__(self) -> None:
        self.conn: apsw.Connection | None = None  # the connection of the mark (kept alive)
        self.token: Any = None  # the copies' state at the mark (e.g. their seq)
        self.header: bytes | None = None
        self._map: mmap.mmap | None = None
        self._file = ""

    def unchanged(self, conn: apsw.Connection, token: Any) -> bool:
        """True when nothing was committed to ``conn``'s file since :meth:`mark` was given
        ``conn`` and an equal ``token``, and ``conn`` is not inside a transaction."""
        return (conn is self.conn and token == self.token and self._map is not None
                and not conn.in_transaction and self._map[:HEADER] == self.header)

    def header_now(self, conn: apsw.Connection) -> bytes | None:
        """Return the header as it is now, to pass to :meth:`mark` after the change-log
        read that follows; ``None`` (nothing to mark) while ``conn`` has no map yet: the
        map is opened here, once ``conn`` has read the file (call this before the read,
        so the first read of a connection only opens it)."""
        if conn is not self.conn:
            self.forget()
            self.conn = conn  # the map is opened on this connection's next search
            return None
        if self._map is None:
            self._map = _open_map(conn)
            return None
        return self._map[:HEADER]

    def mark(self, header: bytes | None, token: Any) -> None:
        """Remember ``header`` (from :meth:`header_now`, read before a change-log read that
        found the copies current in the state ``token``)."""
        self.header, self.token = header, (token if header is not None else None)

    def forget(self) -> None:
        """Trust nothing until the next mark (the next search reads the log)."""
        self.header = self.token = None
        if self._map is not None:
            self._map.close()
            self._map = None
        self.conn = None


def _open_map(conn: apsw.Connection) -> mmap.mmap | None:
    """Map the first page of ``conn``'s ``-shm`` file read-only, or ``None`` (not WAL, no
    file, too short, or any error: the caller reads the log instead)."""
    try:
        name = conn.filename
        if not name or conn.execute("PRAGMA journal_mode").get != "wal":
            return None
        fd = os.open(name + "-shm", os.O_RDONLY)
        try:
            if os.fstat(fd).st_size < 2 * HEADER + 40:  # two headers and the checkpoint info
                return None
            return mmap.mmap(fd, HEADER, access=mmap.ACCESS_READ)
        finally:
            os.close(fd)
    except (OSError, ValueError, apsw.Error):
        return None
