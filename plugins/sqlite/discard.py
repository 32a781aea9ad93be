"""Deleting a store a write created and then stored nothing into (trial 16 F4: an ingest
interrupted before its first batch committed left an empty ``.octomem/`` behind, where
"an ingest that stores nothing creates no store")."""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from typing import Protocol

import apsw

from . import snapshots

#: Tables whose rows make a store worth keeping: documents (with their chunks), the
#: forget log, the MCP call log. Indexes and metadata rows are rebuilt by the next write.
KEPT_TABLES = ("documents", "forgotten", "call_log")


class Discardable(Protocol):
    path: Path

    def connection(self) -> apsw.Connection: ...

    def close(self) -> None: ...


def holds_nothing(conn: apsw.Connection) -> bool:
    """Return whether the store on ``conn`` has no row in any of :data:`KEPT_TABLES`."""
    present = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    return not any(conn.execute(f"SELECT EXISTS(SELECT 1 FROM {t})").fetchone()[0]
                   for t in KEPT_TABLES if t in present)


def discard_if_empty(storage: Discardable) -> bool:
    """Close ``storage``; when its store holds nothing (:func:`holds_nothing`), delete its
    file and the ``-wal``, ``-shm`` files and the snapshots folder beside it (the folder
    that holds them is left to the caller, who knows whether it made it).

    :returns: whether the store was deleted (``False``: it holds something, e.g. what
        another process wrote meanwhile, or it could not be read; it is kept).
    """
    try:
        empty = holds_nothing(storage.connection())
    except apsw.Error:
        empty = False
    if not empty:
        storage.close()
        return False
    delete(storage)
    return True


def delete(storage: Discardable) -> None:
    """Close ``storage`` and delete its file, the ``-wal`` and ``-shm`` files and the
    snapshots folder beside it, whatever it holds: for :func:`discard_if_empty`, and for
    a file the storage was creating when setting it up failed (a full disk, trial 19 K3)."""
    storage.close()  # the last connection's close removes -wal and -shm itself
    path = storage.path
    for leftover in (path, path.with_name(path.name + "-wal"),
                     path.with_name(path.name + "-shm")):
        with contextlib.suppress(FileNotFoundError):
            leftover.unlink()
    shutil.rmtree(snapshots.folder(path), ignore_errors=True)
