"""Snapshots of the in-RAM copies (numpy arrays) beside the SQLite file, trusted only when
they match the store.

A process that loads an in-RAM copy whole (the vector matrix: ~1 s per 100k vectors,
~15 s at 1M; the postings: ~3 s per 100k chunks; the filter index: ~1 s per 100k) writes
it to ``<db>.snapshots/<name>.<seq>.<tag>/`` as one ``.npy`` file per array plus a JSON
file for what is not an array, then points ``<db>.snapshots/<name>.json`` at that folder
(an atomic rename: a reader sees the old snapshot or the new one, never half of one).
The next process memory-maps the arrays (copy-on-write: its changes stay private) and
follows the change log (:mod:`.changelog`) from the snapshot's position, as a copy
loaded then would.

A snapshot is used only when all of these hold, else it is ignored (the copy is loaded
from the tables in place, and saved again):

- its store identity equals this file's (a random id written into ``meta`` when the
  store is created, or first opened by a version that has it): a snapshot of another
  store, or of a file replaced by another, is never read;
- its change-log position is not past this file's newest log row, and the log row at
  that position is still there with the same contents: a file restored from a backup,
  or whose log was pruned past the snapshot, does not match. Each write transaction
  ends its log rows with a random one (:func:`.changelog.seal`), so a backup restored
  and then written to again does not match either, though its log reaches the same
  position;
- its files parse, with the names, types and shapes the copy expects (a truncated or
  corrupt file is a warning in the log, never an error), and hold the bytes written:
  each array file's CRC-32, recorded when it was written, is checked before use, or for
  a large file in a thread while the copy is in use (:mod:`.snapshot_checksums`);
- what the copy checks after following the log (row counts, a sample of rows compared
  with the tables, FTS5's own totals) agrees.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apsw

from octomem.engine.files import private_dir

from . import changelog
from .connection import read_only_mount
from .snapshot_checksums import check_now, checksums

if TYPE_CHECKING:  # imported where arrays are read or written: opening a store stays light
    import numpy as np

#: The ``meta`` key holding the store's random identity.
IDENTITY_KEY = "store_id"
#: A writer's unfinished folder (``.tmp``) younger than this is left alone by others'
#: clean-up; an older one is what a crashed writer left.
STALE_WORK_S = 600.0
#: Change-log rows a copy may have followed since its last snapshot before a long-running
#: process writes a new one (a restore replays at most this much of the log; the log
#: keeps :data:`.changelog.KEEP` rows, so a snapshot further behind cannot be followed).
RESAVE_AFTER = 10_000

log = logging.getLogger(__name__)


def ensure_identity(tx: apsw.Connection) -> str:
    """Return the store's identity, writing a new random one first if it has none.

    :param tx: a connection inside a write transaction.
    """
    row = tx.execute("SELECT value FROM meta WHERE key = ?", (IDENTITY_KEY,)).fetchone()
    if row is not None:
        return str(row[0])
    value = uuid.uuid4().hex
    tx.execute("INSERT INTO meta (key, value) VALUES (?, ?)", (IDENTITY_KEY, value))
    return value


def identity(conn: apsw.Connection) -> str | None:
    """Return the store's identity, or ``None`` when it has none yet."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (IDENTITY_KEY,)).fetchone()
    return None if row is None else str(row[0])


def folder(db: Path) -> Path:
    """Return the snapshot folder of the database file ``db``."""
    return db.with_name(db.name + ".snapshots")


def _log_row(conn: apsw.Connection, seq: int) -> list[Any] | None:
    """Return the change-log row at ``seq`` as ``[table, chunk id]`` (``[]`` for position
    0, before anything was logged), or ``None`` when it is not in the log."""
    if seq <= 0:
        return []
    if not changelog.exists(conn):
        return None
    row = conn.execute(f"SELECT table_name, chunk_id FROM {changelog.TABLE} WHERE seq = ?",
                       (int(seq),)).fetchone()
    return None if row is None else [row[0], row[1]]


@dataclass(frozen=True)
class Snapshot:
    """A snapshot that matched the store.

    :param seq: the change-log position the arrays reflect.
    :param arrays: name -> array, memory-mapped copy-on-write.
    :param extra: what was saved beside the arrays (JSON values).
    :param where: its folder.
    :param unchecked: the CRC-32 of the array files too large to check before use
        (:func:`.snapshot_checksums.check_later` checks them).
    """

    seq: int
    arrays: dict[str, np.ndarray]
    extra: dict[str, Any]
    where: Path | None = None
    unchecked: dict[str, int] = field(default_factory=dict)


def save(db: Path, name: str, conn: apsw.Connection, seq: int,
         arrays: dict[str, np.ndarray], about: dict[str, Any],
         extra: dict[str, Any] | None = None) -> Path | None:
    """Write ``arrays`` (and ``extra``) as snapshot ``name`` of the state at change-log
    position ``seq``.

    :param conn: a connection reading the same state, inside a read transaction (the
        identity and the log row at ``seq`` are recorded from it).
    :param about: what else must match when loading (e.g. table name and dimension).
    :returns: the snapshot's folder; ``None`` when it could not be validated later (the
        store has no identity, or the log row at ``seq`` is gone) and nothing was written.
    :raises OSError: the files cannot be written.
    """
    import numpy as np

    store, row = identity(conn), _log_row(conn, seq)
    if store is None or row is None:
        return None
    base = private_dir(folder(db))
    target = base / f"{name}.{seq}.{uuid.uuid4().hex[:12]}"
    work = target.with_name(target.name + ".tmp")
    work.mkdir(mode=0o700)
    try:
        for key, array in arrays.items():
            np.save(work / f"{key}.npy", array, allow_pickle=False)
        (work / "extra.json").write_text(json.dumps(extra or {}))
        meta = {"identity": store, "seq": int(seq), "log_row": row, "about": about,
                "arrays": sorted(arrays), "crc32": checksums(work, arrays)}
        (work / "meta.json").write_text(json.dumps(meta))
        for path in work.iterdir():
            path.chmod(0o600)
        work.rename(target)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    pointer = base / f"{name}.json"
    staged = base / f"{name}.json.{uuid.uuid4().hex[:12]}"
    staged.write_text(json.dumps({"folder": target.name}))
    staged.chmod(0o600)
    os.replace(staged, pointer)
    _clean(base, name, target)
    return target


def _clean(base: Path, name: str, keep: Path) -> None:
    """Remove ``name``'s earlier snapshots (a reader's memory maps stay valid) and work
    folders a crashed writer left."""
    now = time.time()
    for old in base.glob(f"{name}.*"):
        if old == keep or not old.is_dir():
            continue
        try:
            if old.name.endswith(".tmp") and now - old.stat().st_mtime < STALE_WORK_S:
                continue  # another process is writing it
        except OSError:
            continue
        shutil.rmtree(old, ignore_errors=True)


def load(db: Path, name: str, conn: apsw.Connection, about: dict[str, Any]) -> Snapshot | None:
    """Return snapshot ``name`` if it matches this store (see the module docstring) and
    ``about``; ``None`` when there is none or it does not match (logged when it exists).

    :param conn: a connection inside the read transaction the copy then follows the log in.
    """
    import numpy as np

    base = folder(db)
    pointer = base / f"{name}.json"
    if not pointer.exists():
        return None
    try:
        where = base / str(json.loads(pointer.read_text())["folder"])
        meta = json.loads((where / "meta.json").read_text())
        store, seq = identity(conn), int(meta["seq"])
        if store is None or meta["identity"] != store:
            why = "it is of another store (identity differs)"
        elif meta["about"] != about:
            why = f"it was written for {meta['about']}, not {about}"
        elif seq > changelog.last_seq(conn) or _log_row(conn, seq) != meta["log_row"]:
            why = f"the change log no longer holds its position {seq} as it was"
        elif (damaged := check_now(where, meta.get("crc32") or {}))[0] is not None:
            log.warning("%s: ignoring the %s snapshot, unreadable (its %s.npy does not "
                        "match its checksum); loading from the tables", db, name, damaged[0])
            return None
        else:
            # plain ndarray views of the maps: a np.memmap runs Python code on every
            # index and on every array derived from it (~10 us each, 31 times a recall)
            arrays = {str(k): np.load(where / f"{k}.npy", mmap_mode="c",
                                      allow_pickle=False).view(np.ndarray)
                      for k in meta["arrays"]}
            extra = json.loads((where / "extra.json").read_text())
            return Snapshot(seq, arrays, extra, where, damaged[1])
    except (OSError, ValueError, KeyError, TypeError, EOFError) as exc:  # EOF: an empty file
        log.warning("%s: ignoring the %s snapshot, unreadable (%s: %s); loading from the "
                    "tables", db, name, type(exc).__name__, exc)
        return None
    log.info("%s: ignoring the %s snapshot: %s; loading from the tables", db, name, why)
    return None


def save_in_background(db: Path, name: str, seq: int, arrays: dict[str, np.ndarray],
                       about: dict[str, Any], extra: dict[str, Any] | None = None,
                       done: Callable[[int], None] | None = None) -> threading.Thread:
    """Write a snapshot from a thread with its own read-only connection; a failure is
    logged, never raised.

    Nothing is written (nor logged above debug) for a store on a read-only mount.

    :param arrays: copies the caller made (the thread writes them while the copy moves on).
    :param done: called with ``seq`` once the snapshot is written.
    :returns: the started thread (not a daemon: a short-lived process waits for it).
    """

    def write() -> None:
        if read_only_mount(db.parent):  # no folder can be made there (a read-only store)
            log.debug("%s: on a read-only mount, no %s snapshot written", db, name)
            return
        try:
            conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
            try:
                with conn:  # one read transaction: the log row at seq is checked in it
                    written = save(db, name, conn, seq, arrays, about, extra)
            finally:
                conn.close()
            if written is not None and _drop_if_stale(db, name, written, seq):
                return
            if written is not None and done is not None:
                done(seq)
        except (OSError, apsw.Error, ValueError) as exc:
            log.warning("%s: could not write the %s snapshot: %s", db, name, exc)

    def write_and_forget() -> None:
        try:
            write()
        finally:
            with _SAVING_LOCK:
                _SAVING.get(db, set()).discard(threading.current_thread())

    thread = threading.Thread(target=write_and_forget, name=f"octomem-snapshot-{name}")
    with _SAVING_LOCK:  # started under the lock: wait_for_saves never joins an unstarted one
        _SAVING.setdefault(db, set()).add(thread)
        thread.start()
    return thread


def _drop_if_stale(db: Path, name: str, written: Path, seq: int) -> bool:
    """Remove the snapshot just ``written`` (and its pointer, if it still names it) when a
    deletion committed after its position ``seq`` (:func:`.purge.stale`): it may hold the
    deleted text, and the deleting process, which removes the snapshots after its commit,
    may have looked before it was written.

    :returns: True when it was removed.
    """
    from .purge import stale

    if not stale(db, seq):
        return False
    pointer = folder(db) / f"{name}.json"
    try:
        if json.loads(pointer.read_text()).get("folder") == written.name:
            pointer.unlink(missing_ok=True)
    except (OSError, ValueError, AttributeError):
        pass
    shutil.rmtree(written, ignore_errors=True)
    log.info("%s: removed the %s snapshot just written: a deletion committed after its "
             "position %d", db, name, seq)
    return True


#: The snapshot writers running, by store file (:func:`wait_for_saves`).
_SAVING: dict[Path, set[threading.Thread]] = {}
_SAVING_LOCK = threading.Lock()


def wait_for_saves(db: Path) -> None:
    """Wait until every snapshot of ``db`` being written by this process is written: a
    store being closed (its folder perhaps removed next) leaves no writer behind."""
    with _SAVING_LOCK:
        running = list(_SAVING.pop(db, ()))
    for thread in running:
        if thread is not threading.current_thread():
            thread.join()


def check(arrays: dict[str, np.ndarray], shapes: dict[str, tuple[int | None, ...]],
          dtypes: dict[str, str]) -> bool:
    """True when ``arrays`` holds every name of ``shapes`` with that shape (``None``: any
    length) and the dtype named in ``dtypes`` (e.g. ``"int64"``)."""
    for key, shape in shapes.items():
        arr = arrays.get(key)
        if arr is None or arr.ndim != len(shape) or str(arr.dtype) != dtypes[key]:
            return False
        if any(want is not None and got != want
               for got, want in zip(arr.shape, shape, strict=True)):
            return False
    return True
