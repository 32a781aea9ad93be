"""Which processes are embedding a scope's chunks now: an advisory lock beside the store.

An ingest stores documents first and embeds their chunks afterwards; an ingest that
finds a document unchanged whose chunks have no vector embeds them too, taking them for
chunks "left without a vector by an earlier ingest" (killed, or its model failing).
When several ingests of one folder run at once (a cron job overlapping a manual run, two
MCP clients) those chunks are usually another process's that is embedding them right
now: each of three ingests embedded every chunk (trial 17 G14). The lock tells them
apart:

- an ingest that stores chunks and embeds them holds the lock **shared** from before its
  first write until its embedding ends (several do at once);
- an ingest that would embed chunks of documents it found unchanged first takes the lock
  **exclusively** — it waits until no other ingest is storing or embedding — and then
  embeds only the chunks that still have no vector: those another ingest embedded
  meanwhile are left alone, and only what is really left behind is called so;
- ``octomem reindex`` and ``octomem import``, which embed every chunk of the scope
  without a vector, do the same (an import holds it shared while it stores, too), then
  hold it shared again while they embed what they found, so that ingests started
  meanwhile store and embed their own chunks (:meth:`~.pipeline.Pipeline.embed_missing`);
- ``remember`` holds it shared while it stores its statement and writes its vector, when
  it can at once: it never waits behind a long embedding (a process holding the lock
  exclusively chose its chunks before the statement was stored).

It is :func:`fcntl.flock` on ``<scope>/embedding.lock``, so a process that dies releases
it, and a lock is never waited for while a write transaction is open (the waiting
ingest holds no transaction: no deadlock with the holder's vector writes). Where the file
cannot be opened (a read-only folder) or ``fcntl`` does not exist, nothing is locked and
ingests behave as before.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX: no coordination
    fcntl = None  # type: ignore[assignment]

#: The lock file's name inside the scope's folder.
LOCK_NAME = "embedding.lock"


class EmbeddingLock:
    """The embedding lock of the scope stored in ``root``, held by this object.

    :param root: the scope's folder (the store's directory).
    """

    def __init__(self, root: Path) -> None:
        self.path = Path(root) / LOCK_NAME
        self._fd: int | None = None

    def share(self, wait: bool = True) -> bool:
        """Take the lock shared (waiting while a process holds it exclusively).

        :param wait: ``False``: do not wait; hold nothing when a process holds it
            exclusively.
        :returns: whether it is held (also ``True`` where nothing can be locked).
        """
        if fcntl is None:
            return True
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:  # a read-only or vanished folder: nothing to coordinate with
            self._fd = None
            return True
        try:
            fcntl.flock(self._fd, fcntl.LOCK_SH | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            self.release()
            return False
        return True

    def share_again(self) -> None:
        """Hold the lock shared again after :meth:`exclusive` (other processes may then
        store and embed their own chunks; one that would take it exclusively waits)."""
        if fcntl is not None and self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_SH)

    def exclusive(self, waiting: Callable[[], None] | None = None) -> None:
        """Hold the lock exclusively: once no other process stores or embeds in this
        scope. The shared hold is given up first (two processes converting at once would
        otherwise wait for each other).

        :param waiting: called once before waiting, when another process holds it.
        """
        if fcntl is None or self._fd is None:
            return
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if waiting is not None:
                waiting()
            fcntl.flock(self._fd, fcntl.LOCK_EX)

    def release(self) -> None:
        """Let the lock go (closing the file releases it)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
