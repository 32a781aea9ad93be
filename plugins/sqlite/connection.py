"""Connections to the ``sqlite`` storage's file: sqlite-vec loaded, WAL, busy timeout,
``secure_delete`` on (deleted rows and freed pages are overwritten with zeros, so a
forgotten statement's text is not left in the file's free space: :mod:`.purge`)."""

from __future__ import annotations

import importlib.util
import os
import time
from pathlib import Path

import apsw

from octomem.engine.errors import (
    OctomemError,
    StoreBusyError,
    StoreGoneError,
    StoreReadOnlyError,
    StoreUnreadableError,
    StoreWriteError,
)
from octomem.engine.exhaustion import ResourceExhaustedError, exhaustion

#: ``(st_dev, st_ino)`` of a file: which file a path names (one ``os.stat``)
FileId = tuple[int, int]


def vec0_path() -> str:
    """Return the path of sqlite-vec's loadable extension (without its file suffix, as
    ``sqlite_vec.loadable_path()`` does), found without importing the ``sqlite_vec``
    package: its ``__init__`` imports numpy, which opening a store (``octomem status``)
    does not otherwise need.

    :raises OSError: the ``sqlite-vec`` package is not installed.
    """
    spec = importlib.util.find_spec("sqlite_vec")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    if not folders:
        raise OSError("the sqlite-vec package is not installed")
    return os.path.normpath(os.path.join(folders[0], "vec0"))


def open_connection(path: Path, busy_timeout_ms: int) -> apsw.Connection:
    """Open ``path`` with sqlite-vec loaded, WAL journaling, foreign keys, a busy timeout
    and ``PRAGMA secure_delete=ON`` (SQLite zeroes deleted content instead of leaving it in
    the page or on the freelist; it is a setting of the connection, not of the file, so
    every connection that may delete sets it). A store on a read-only mount, which SQLite
    cannot open so (it needs the ``-shm`` file beside it even to read), is opened
    read-only as immutable instead (:func:`open_on_read_only_mount`).

    :raises OctomemError: the file cannot be opened or written (naming it), this SQLite
        cannot load extensions, or sqlite-vec is missing.
    :raises StoreLockedError: another process kept the file locked past the busy timeout.
    """
    try:
        conn = apsw.Connection(str(path))
    except (apsw.CantOpenError, apsw.ReadOnlyError, apsw.PermissionsError) as exc:
        return open_on_read_only_mount(path, exc)
    _load_vec0(conn)
    conn.set_busy_timeout(busy_timeout_ms)
    try:
        _journal_wal(conn, busy_timeout_ms)
    except (apsw.CantOpenError, apsw.ReadOnlyError, apsw.PermissionsError) as exc:
        conn.close()
        return open_on_read_only_mount(path, exc)
    except apsw.BusyError as exc:
        conn.close()
        raise locked(path, busy_timeout_ms) from exc
    conn.execute("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; PRAGMA secure_delete=ON")
    return conn


def open_on_read_only_mount(path: Path, exc: Exception) -> apsw.Connection:
    """Open ``path``, which SQLite could not open as usual (``exc``), read-only and
    immutable (``?immutable=1``: no ``-wal`` or ``-shm`` file, no locks) when its folder is
    on a read-only mount and no write-ahead log beside it holds writes: no process can
    change a file there, which is what immutable asks (trial 21: a store on a read-only
    mount answered no search). Every write to it then fails as read-only
    (:func:`write_failed`).

    :raises OctomemError: :func:`cannot_open`'s error when it is not on a read-only mount,
        or its ``-wal`` holds writes this way of opening would not read.
    """
    if not read_only_mount(path.parent) or _wal_bytes(path) > 0:
        raise cannot_open(path, exc) from exc
    try:
        conn = apsw.Connection(f"{path.absolute().as_uri()}?immutable=1",
                               flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
        conn.execute("SELECT count(*) FROM sqlite_schema").fetchall()
    except apsw.Error as again:
        raise cannot_open(path, again) from exc
    _load_vec0(conn)
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


def read_only_mount(folder: Path) -> bool:
    """Whether ``folder`` is on a file system mounted read-only (``statvfs``'s
    ``ST_RDONLY``; ``False`` when it cannot be examined)."""
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _wal_bytes(path: Path) -> int:
    try:
        return os.stat(f"{path}-wal").st_size
    except OSError:
        return 0


def _load_vec0(conn: apsw.Connection) -> None:
    """Load sqlite-vec into ``conn`` (closing it when that fails).

    :raises OctomemError: this SQLite cannot load extensions, or sqlite-vec is missing.
    """
    try:
        conn.enable_load_extension(True)
        conn.load_extension(vec0_path())
        conn.enable_load_extension(False)
    except (AttributeError, apsw.Error, OSError) as exc:
        conn.close()
        raise OctomemError(
            f"cannot load the sqlite-vec extension into SQLite ({type(exc).__name__}: {exc}); "
            "octomem needs an apsw build that allows loading extensions and the sqlite-vec "
            "package: pip install --force-reinstall apsw sqlite-vec"
        ) from exc


class StoreLockedError(StoreBusyError, apsw.BusyError):
    """Another process held the store's write lock past the busy timeout.

    Still an :class:`apsw.BusyError` (callers that retry on SQLite's own error keep
    working); as an :class:`~octomem.engine.errors.StoreBusyError` the CLI prints it as
    one line and the MCP server returns it as a tool error. Nothing was written: the
    write never began.
    """


def locked(path: Path, busy_timeout_ms: int) -> StoreLockedError:
    """Return the error for a store whose write lock another process held for the whole
    busy timeout: it names the file, the wait, the setting and what to do."""
    return StoreLockedError(
        f"the store {path} is locked: another process held its write lock for "
        f"{busy_timeout_ms / 1000:g} s (arms.sqlite.busy_timeout_ms); nothing was written; "
        "run the command again when that process is done (or raise "
        "arms.sqlite.busy_timeout_ms)"
    )


def read_only(path: Path) -> StoreReadOnlyError:
    """Return the error for a store SQLite opened read-only (the file is not writable, or
    immutable, or on a read-only mount): it names the file and what to do."""
    return StoreReadOnlyError(
        f"{path} is read-only: nothing was written; make it writable for this user "
        f"(chmod u+w; chattr -i if it is immutable; a read-only mount) to store anything")


def write_failed(path: Path, exc: BaseException) -> OctomemError | None:
    """Return the one-line error for a write SQLite refused because of the file itself
    (read-only; the disk or the file's size limit full: ``SQLITE_FULL``; an I/O error:
    ``SQLITE_IOERR``), naming ``path`` and saying nothing was written (the transaction was
    rolled back); ``None`` for any other error."""
    if isinstance(exc, apsw.ReadOnlyError):
        return read_only(path)
    if isinstance(exc, apsw.FullError):
        return StoreWriteError(
            f"{path}: the disk is full ({exc}): nothing was written; free some space on "
            f"the disk that holds {path.parent} and run the command again")
    if isinstance(exc, apsw.IOError):
        return StoreWriteError(
            f"{path}: the disk could not be written ({exc}): nothing was written; check "
            f"the disk that holds {path.parent} (free space, errors in the system log) and "
            "run the command again")
    return None


def file_id(path: Path) -> FileId | None:
    """Return ``(st_dev, st_ino)`` of the file ``path`` names now, or ``None`` when no
    file is there (one ``os.stat``, about a microsecond)."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return st.st_dev, st.st_ino


#: Fewest bytes of a store octomem opened: its first page, written when the file is put
#: in WAL mode (512 is SQLite's smallest page size; octomem's pages are 4096).
MIN_STORE_BYTES = 512


def gone(path: Path, opened: FileId | None) -> str | None:
    """Return why ``path`` no longer names the store that was opened as ``opened`` (it was
    deleted, another file was put in its place, or it was emptied in place: ``: > file``,
    a tool that truncated it, trial 16 F22), or ``None`` when it still does (or ``opened``
    is unknown, or the path cannot be examined: SQLite then reports it). One ``os.stat``.

    An emptied file was blamed on "another process held its write lock for 5 s": SQLite
    waits out its busy timeout on a log (``-wal``) that no longer matches the file."""
    if opened is None:
        return None
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return f"the store {path} was deleted while octomem had it open"
    except OSError:
        return None
    if (st.st_dev, st.st_ino) != opened:
        return f"the store {path} was replaced by another file while octomem had it open"
    if st.st_size < MIN_STORE_BYTES:
        return (f"the store {path} was emptied ({st.st_size} bytes) by another program while "
                "octomem had it open: it is no longer a database")
    return None


def gone_error(why: str) -> StoreGoneError:
    """Return the error for a write refused because its store's file is gone (``why``:
    :func:`gone`'s line): nothing was written, and what happens next."""
    return StoreGoneError(
        f"{why}: nothing was written to it; octomem reopens the store at that path on the "
        "next call (a new, empty one if the file is gone): repeat the write to store it there")


def cannot_open(path: Path, exc: Exception) -> OctomemError:
    """Return the error for a store file SQLite cannot open or write: it names the file
    and the likely cause (SQLite writes the file, its ``-wal`` and ``-shm`` beside it, even
    to read a store in WAL mode, so its folder must be writable), or, when the process is
    out of file descriptors (SQLite says only "unable to open"), that instead.

    A :class:`StoreUnreadableError`, as for a damaged file: a read over both scopes skips
    this one and says why, so a project's ``.octomem/`` made by ``sudo`` or on a read-only
    mount no longer takes the global scope down with it (trial 16 F5)."""
    why = exhaustion(exc, f"cannot open the store {path}", probe=True)
    if why is not None:
        return ResourceExhaustedError(why)
    return StoreUnreadableError(
        f"cannot open the store {path} ({exc}); octomem writes the file and its -wal and "
        f"-shm files beside it even to read, so {path.parent} must exist and be writable"
    )


def _journal_wal(conn: apsw.Connection, busy_timeout_ms: int) -> None:
    """Switch ``conn``'s file to WAL journaling, retrying while another connection does.

    On a brand-new file several connections race to change the journal mode; SQLite then
    answers "database is locked" at once, without calling the busy handler (it would be a
    deadlock), so the busy timeout alone does not cover it.

    :raises apsw.BusyError: the file stayed locked for ``busy_timeout_ms`` milliseconds.
    """
    deadline = time.monotonic() + busy_timeout_ms / 1000
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL").fetchall()
            return
        except apsw.BusyError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.005)


def unreadable(path: Path | str, problem: BaseException | str) -> str:
    """Return the one line that says ``path`` cannot be read: what SQLite found
    (``problem``) and what to do. Nothing is written to the file."""
    found = problem.args[0] if isinstance(problem, BaseException) and problem.args else problem
    lines = [line for line in str(found).splitlines() if line and not line.startswith("***")]
    found = "; ".join(lines) or found  # quick_check's report: one line, without its header
    return (f"{path}: {found}; octomem cannot read it and left it as it is (restore it from "
            "a backup or an `octomem export`, or move it away to start empty)")
