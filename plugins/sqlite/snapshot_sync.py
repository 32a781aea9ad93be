"""Keeping an in-RAM copy in step with its tables, starting from its snapshot when one
matches (:mod:`.snapshots`), and writing a new snapshot after a whole load.

The in-RAM copies (:class:`~octomem.plugins.sqlite.filter_index.FilterIndex`,
:class:`~octomem.plugins.fts5.postings.PostingIndex`,
:class:`~octomem.plugins.sqlite_vec.matrix.VectorMatrix`) each implement
:class:`Snapshotted`; :func:`sync` replaces their ``changelog.follow`` call.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import apsw

from . import changelog, snapshots
from .snapshot_checksums import check_later

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)


@dataclass
class SnapshotState:
    """Where a copy's snapshots live and what became of them.

    :param db: the database file whose snapshot folder is used; ``None``: no snapshots
        (option ``arms.sqlite.snapshots = false``).
    :ivar origin: ``"snapshot"`` when the copy was restored from one (and agreed with the
        tables), ``"tables"`` when it was loaded whole, ``""`` before either.
    :ivar saved_seq: the change-log position of the newest snapshot written or restored.
    :ivar saving: the thread writing the last snapshot started, if any.
    """

    db: Path | None = None
    origin: str = ""
    saved_seq: int = -1
    saving: threading.Thread | None = None
    tried: bool = False  # a restore was attempted (one per copy and process)
    #: set by the check of the restored snapshot's large files when one was damaged: the
    #: copy is loaded from the tables at its next sync
    damaged: threading.Event = field(default_factory=threading.Event)
    restores: int = field(default=0)  # snapshots restored (tests count them)
    loads: int = field(default=0)  # whole loads from the tables


class Snapshotted(Protocol):
    """What :func:`sync` needs of an in-RAM copy."""

    seq: int
    snapshot: SnapshotState

    def snapshot_name(self) -> str:
        """The snapshot's file name stem (unique per copy in one store)."""
        ...

    def snapshot_about(self) -> dict[str, Any]:
        """What the snapshot must have been written for besides the store."""
        ...

    def snapshot_adopt(self, snap: snapshots.Snapshot) -> bool:
        """Take the snapshot's arrays as the copy at ``snap.seq``; False (copy left empty)
        when they have other names, shapes or types than this copy writes."""
        ...

    def snapshot_agrees(self, conn: apsw.Connection) -> bool:
        """After following the log from a restored snapshot: True when the copy matches
        the tables (counts, a sample of rows)."""
        ...

    def snapshot_export(self) -> tuple[dict[str, np.ndarray], dict[str, Any]] | None:
        """Copies of the arrays and the JSON extra to save, or ``None`` when the copy is
        not in a state it saves (e.g. postings with unsorted additions)."""
        ...


def restore(copy: Snapshotted, conn: apsw.Connection) -> bool:
    """Fill a never-loaded ``copy`` from its snapshot when one matches the store.

    Tried once per copy: a snapshot found not to match is not read again by this process.

    :returns: True when restored (``copy.seq`` is then the snapshot's position, to be
        followed from); False with the copy untouched otherwise.
    """
    state = copy.snapshot
    if copy.seq >= 0 or state.db is None or state.tried:
        return False
    state.tried = True
    snap = snapshots.load(state.db, copy.snapshot_name(), conn, copy.snapshot_about())
    if snap is None:
        return False
    if not copy.snapshot_adopt(snap):
        log.warning("%s: ignoring the %s snapshot: its arrays are not the copy's (names, "
                    "shapes or types); loading from the tables", state.db, copy.snapshot_name())
        return False
    copy.seq, state.saved_seq = snap.seq, snap.seq
    if snap.where is not None:
        check_later(state.db, copy.snapshot_name(), snap.where, snap.unchecked,
                    state.damaged.set)
    return True


def sync(copy: Snapshotted, conn: apsw.Connection, log_name: str,
         load_all: Callable[[], None], apply: Callable[[list[int]], None],
         restore_only: bool = False) -> bool:
    """Bring ``copy`` up to date inside the caller's read transaction on ``conn``.

    A copy never loaded starts from its snapshot when one matches; after following the
    log it is checked against the tables, and loaded whole when it disagrees. After a
    whole load, or once the copy has followed :data:`~.snapshots.RESAVE_AFTER` log rows
    past its last snapshot, a new snapshot is written in the background.

    :param log_name: the copy's ``table_name`` in the change log.
    :param restore_only: a copy with no matching snapshot stays unloaded (a one-shot
        process whose search the SQL paths answer faster than a whole load).
    :returns: True when the copy is loaded afterwards.
    """
    state = copy.snapshot
    restored = restore(copy, conn)
    if restore_only and copy.seq < 0:
        return False
    loaded: list[bool] = []

    def whole() -> None:
        load_all()
        loaded.append(True)

    if state.damaged.is_set():  # its snapshot's large files did not match their checksums
        state.damaged.clear()
        copy.seq = changelog.follow(conn, log_name, -1, whole, apply)
    copy.seq = changelog.follow(conn, log_name, copy.seq, whole, apply)
    if restored and not loaded and not copy.snapshot_agrees(conn):
        log.warning("%s: the %s snapshot disagrees with the tables after following the "
                    "change log; loading from the tables", state.db, copy.snapshot_name())
        copy.seq = changelog.follow(conn, log_name, -1, whole, apply)
        restored = False
    if loaded:
        state.origin, state.loads = "tables", state.loads + 1
    elif restored:
        state.origin, state.restores = "snapshot", state.restores + 1
    if state.db is not None and (loaded or copy.seq - state.saved_seq >= snapshots.RESAVE_AFTER):
        save(copy)
    return True


def current(copy: Snapshotted, last: int) -> bool:
    """True when :func:`sync` of ``copy`` would do nothing now that the change log's newest
    ``seq`` is ``last`` (:func:`.changelog.last_seq`): loaded, at ``last``, and no snapshot
    due. Lets a search that reads ``last`` once skip both copies' syncs (and their read
    transaction) while nothing was written."""
    state = copy.snapshot
    return copy.seq == last >= 0 and not state.damaged.is_set() and (
        state.db is None or copy.seq - state.saved_seq < snapshots.RESAVE_AFTER)


def save(copy: Snapshotted) -> threading.Thread | None:
    """Write ``copy``'s snapshot in the background (call holding the copy's lock) unless
    one is being written or the copy is not in a state it saves.

    :returns: the writing thread, or ``None`` when nothing was started.
    """
    state = copy.snapshot
    if state.db is None or (state.saving is not None and state.saving.is_alive()):
        return None
    exported = copy.snapshot_export()
    if exported is None:
        return None
    arrays, extra = exported

    def done(seq: int) -> None:
        state.saved_seq = max(state.saved_seq, seq)

    state.saved_seq = max(state.saved_seq, copy.seq)  # no second save while this one runs
    state.saving = snapshots.save_in_background(
        state.db, copy.snapshot_name(), copy.seq, arrays, copy.snapshot_about(), extra, done)
    return state.saving
