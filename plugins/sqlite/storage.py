"""The ``sqlite`` storage: documents, chunks and metadata in one SQLite file per scope.

Uses apsw rather than the stdlib ``sqlite3`` module, because the stdlib binding is
often built without extension loading and the sqlite-vec extension must be loaded on
*every* connection (datasette's ``prepare_connection`` rule). Each thread gets its own
connection (the MCP server calls from worker threads; an apsw connection must not be
used by two threads at once). The file is in WAL mode, so readers never block the
single writer, and waits up to ``busy_timeout_ms`` for a lock.

Also exports :func:`filter_sql`, which the ``fts5`` and ``sqlite-vec`` arms use to apply
:class:`~octomem.engine.types.Filters` inside their own SQL. The rest of the storage
lives beside this module: the schema and its migrations (:mod:`.schema`), row
codecs (:mod:`.rows`), the filter SQL (:mod:`.filters`), the reads (:mod:`.reads`) and
statement history, recall counters and the forget log (:mod:`.history`).
"""

from __future__ import annotations

import logging
import stat
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apsw
from pydantic import BaseModel, Field

from octomem.engine.arms import ArmContext, ArmSpec
from octomem.engine.errors import (
    IncompatibleArmsError,
    OctomemError,
    StoreReadOnlyError,
    StoreUnreadableError,
)
from octomem.engine.files import private_dir, private_file
from octomem.engine.hookspecs import hookimpl
from octomem.engine.types import Chunk, Document

from . import purge
from .bulk import SqliteBulkWrites
from .calls import SqliteCallLog
from .checkpoints import Checkpointer
from .connection import StoreLockedError, file_id, gone, open_connection, unreadable
from .filters import filter_sql, json_path
from .history import SqliteHistory
from .reads import SqliteReads
from .reads import first_row as _one
from .rows import CHUNK_FIELDS, DOC_COLUMNS, chunk_params, inherit, stored_params
from .schema import SCHEMA_VERSION, log_inserted, migrate, triggers_due, update_triggers
from .snapshots import ensure_identity, wait_for_saves
from .tag_labels import LABELLED_KEY, relabel_stored_tags
from .transactions import SqliteTransactions

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from .chunk_cache import ChunkCache
    from .filter_index import FilterIndex

__all__ = [
    "SCHEMA_VERSION", "SqliteStorage", "SqliteStorageOptions", "StoreLockedError", "filter_sql",
    "json_path",
]

NAME = "sqlite"


class SqliteStorageOptions(BaseModel, extra="forbid", defer_build=True, allow_inf_nan=False):
    """Options of the ``sqlite`` storage (settings table ``[arms.sqlite]``)."""

    filename: str = Field(
        default="octomem.sqlite3", pattern=r"^[^/\\:]+$",
        description="database file name inside the scope directory",
    )
    busy_timeout_ms: int = Field(
        default=5000, ge=0, le=600_000, description="how long to wait for a lock, in milliseconds",
        json_schema_extra={"group": "runtime"},
    )
    snapshots: bool = Field(
        default=True, json_schema_extra={"group": "runtime"},
        description="keep snapshots of the in-RAM copies (vectors, postings, filter index) "
        "beside the file, in <filename>.snapshots/: a process starts from them instead of "
        "loading the tables (used only when they match the store and its change log)",
    )


def require_sqlite(storage: Any, arm: str) -> SqliteStorage:
    """Return ``storage`` if it is the ``sqlite`` storage.

    :raises IncompatibleArmsError: it is another storage; names both arms.
    """
    if isinstance(storage, SqliteStorage):
        return storage
    other = getattr(storage, "name", type(storage).__name__)
    raise IncompatibleArmsError(f"arm {arm!r} requires storage 'sqlite', not {other!r}")


class SqliteStorage(SqliteTransactions, SqliteReads, SqliteHistory, SqliteCallLog,
                    SqliteBulkWrites):
    """Documents and chunks in one SQLite file, one apsw connection per thread.

    Besides the :class:`~octomem.engine.arms.Storage` Protocol it implements the optional
    :class:`~octomem.engine.arms.VersionedStorage` methods (history, recall counters,
    forget log; see :mod:`.history`), :meth:`revise_document`, and the optional
    :class:`~octomem.engine.arms.CallLogStorage` (the MCP call log, :mod:`.calls`).

    :param path: the database file; its directory is created if missing.
    :param busy_timeout_ms: how long a statement waits for a lock, in milliseconds.
    :param snapshots: the in-RAM copies start from (and write) snapshots beside the file.
    :raises OctomemError: extensions cannot be loaded, or the file's schema is newer
        than this version of octomem.
    """

    name = NAME

    def __init__(self, path: Path, busy_timeout_ms: int = 5000, snapshots: bool = True) -> None:
        self.path = Path(path)
        self.busy_timeout_ms = busy_timeout_ms
        #: the file whose snapshot folder the in-RAM copies use (:mod:`.snapshots`), or None
        self.snapshot_db: Path | None = self.path if snapshots else None
        private_dir(self.path.parent)
        created = not self.path.exists()
        private_file(self.path)  # its -wal and -shm files take its mode
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[tuple[threading.Thread, apsw.Connection]] = []
        self._closed = False
        self._fields: FilterIndex | None = None
        self._cache: ChunkCache | None = None
        #: checkpoints the WAL in a thread of its own (:mod:`.checkpoints`)
        self.checkpoints = Checkpointer(self.path, self.gone)
        try:
            self._migrate()
        except BaseException as exc:  # a file this was creating is deleted again (K3)
            self._set_up_failed(created, exc)
            raise
        self.opened_file = file_id(self.path)
        with self.checkpoints.paused():  # its TRUNCATE must not find the thread's running
            purge.catch_up(self.connection(), self.path)  # what an older writer deleted

    def _set_up_failed(self, created: bool, exc: BaseException) -> None:
        """Close the store whose schema could not be written or read; delete it when this
        storage was creating the file (a full disk: "an ingest that stores nothing creates
        no store", trial 19 K3); a disk-full error is raised as the one-line
        :class:`~octomem.engine.errors.StoreWriteError` a write gets."""
        from .connection import write_failed
        from .discard import delete

        if created:
            delete(self)
        else:
            self.close()
        refused = write_failed(self.path, exc)
        if refused is not None:
            raise refused from exc

    @property
    def fields(self) -> FilterIndex:
        """The chunks' filterable fields in RAM (:mod:`.filter_index`), loaded by the
        in-RAM arms' warm-up (the SQL filters apply until then). Made on first use, so a
        process that never searches in RAM never imports numpy for it."""
        if self._fields is None:
            from .chunk_cache import ChunkCache
            from .filter_index import FilterIndex

            self._fields = FilterIndex()
            self._fields.snapshot.db = self.snapshot_db
            self._cache = ChunkCache()
            self._fields.listeners.append(self._cache.changed)
        return self._fields

    def connection(self) -> apsw.Connection:
        """Return the calling thread's connection, opening it on first use.

        :raises OctomemError: the storage is closed, or the extension cannot be loaded.
        """
        conn: apsw.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        with self._lock:
            if self._closed:
                raise OctomemError(f"storage {self.path} is closed")
            conn = open_connection(self.path, self.busy_timeout_ms)
            conn.set_wal_hook(self.checkpoints.hook)
            alive = [(t, c) for t, c in self._connections if t.is_alive()]
            for thread, dead in self._connections:
                if not thread.is_alive():
                    dead.close()
            self._connections = [*alive, (threading.current_thread(), conn)]
        self._local.conn = conn
        return conn

    def _migrate(self) -> None:
        """Create or upgrade the schema.

        :raises StoreUnreadableError: the file is not an SQLite database or is corrupt;
            names the file (it is left as it is: nothing is written to it).
        """
        try:
            with self.transaction() as tx:
                migrate(tx, self.path, lambda key, value: self.set_meta(tx, key, value))
                ensure_identity(tx)  # what snapshots beside the file are checked against
        except (apsw.CorruptError, apsw.NotADBError) as exc:
            self.close()
            raise StoreUnreadableError(unreadable(self.path, exc)) from exc
        # upkeep of a file an older octomem wrote, apart from the migration and only when
        # a read says it is due (opening takes no write lock otherwise): a read-only file
        # is read as it is
        conn = self.connection()
        if triggers_due(conn) or self.get_meta(LABELLED_KEY) is None:
            try:
                with self.transaction() as tx:
                    update_triggers(tx)
                    relabel_stored_tags(tx, lambda key, value: self.set_meta(tx, key, value))
            except StoreReadOnlyError:
                pass

    def gone(self) -> str | None:
        """Say whether the path still names the file this storage opened (one
        ``os.stat``): a file deleted (``rm -rf .octomem``) or replaced while it is open
        keeps serving its old content from RAM and would take writes nobody can read.

        :returns: one line naming the file and what became of it, or ``None``.
        """
        return gone(self.path, self.opened_file)

    def retire_wal(self) -> None:
        """Empty the write-ahead log of the file this storage opened, before the storage
        is closed because another file took its path or the file was deleted: SQLite
        keeps the log beside the path (``-wal``, ``-shm``), and a file put at the path
        would read the old file's pages from it as its own (trial 15 F12: a backup moved
        into place while the server ran was overwritten by the store it replaced).
        ``PRAGMA wal_checkpoint(TRUNCATE)`` on a connection this storage already has
        (none is opened: a new one would open the new file) writes the log into the old
        file, through the descriptor it holds, and truncates the log to 0 bytes. A
        failure (a busy reader past the busy timeout) is logged; the close goes on."""
        with self._lock:
            opened = [conn for _, conn in self._connections]
        for conn in opened[:1]:
            try:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            except apsw.Error as exc:
                log.warning("could not empty the write-ahead log of %s, whose path another "
                            "file took: %s: %s", self.path, type(exc).__name__, exc)

    def discard_if_empty(self) -> bool:
        """Close the storage and, when its store holds nothing (no document, forget-log
        entry or logged call), delete the file and what lies beside it
        (:func:`.discard.discard_if_empty`): for a store a write created and then stored
        nothing into.

        :returns: whether the store was deleted.
        """
        from .discard import discard_if_empty

        return discard_if_empty(self)

    def damage(self) -> str | None:
        """Check the file's structure (``PRAGMA quick_check``: every page and b-tree,
        O(file size); called only after a read failed unexpectedly).

        :returns: one line naming the file, what SQLite found and what to do, or ``None``
            when the file is sound.
        """
        try:
            rows = self.connection().execute("PRAGMA quick_check(1)").fetchall()
        except (apsw.CorruptError, apsw.NotADBError) as exc:
            return unreadable(self.path, exc)
        found = str(rows[0][0]) if rows else "ok"
        return None if found == "ok" else unreadable(self.path, found)

    def _insert_chunks(
        self, tx: apsw.Connection, document: Document, chunks: Sequence[Chunk]
    ) -> list[Chunk]:
        stored: list[Chunk] = []
        for chunk in chunks:
            c = inherit(chunk, document)
            row = _one(
                tx, f"INSERT INTO chunks ({CHUNK_FIELDS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?) "
                "RETURNING id", chunk_params(c))
            stored.append(replace(c, id=row[0]))
        log_inserted(tx, [c.id for c in stored])
        return stored

    def add_document(
        self, tx: apsw.Connection, document: Document, chunks: Sequence[Chunk]
    ) -> list[Chunk]:
        """Store ``document`` and its chunks inside ``tx``.

        Each chunk takes the document's id, kind, tags, ``created_at``, validity and
        revision; its own title, uri and metadata keys win over the document's. History
        and usage fields of ``document`` (``superseded_by``, ``valid_to``, ``recalls``,
        ...) are stored as given, so an import restores them.

        :returns: the stored chunks, in the given order, with their new integer ids.
        :raises OctomemError: a document with this id exists (delete it first), or its
            metadata is not JSON-serialisable.
        """
        if _one(tx, "SELECT 1 FROM documents WHERE id = ?", (document.id,)):
            raise OctomemError(f"document {document.id!r} already exists; delete it first")
        tx.execute(
            f"INSERT INTO documents ({DOC_COLUMNS}, content_hash) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", stored_params(document, chunks))
        return self._insert_chunks(tx, document, chunks)

    def revise_document(
        self, tx: apsw.Connection, document: Document, chunks: Sequence[Chunk]
    ) -> tuple[list[Chunk], list[int]]:
        """Store changed content of an existing document as its next revision, inside ``tx``.

        The current chunks stay, superseded from ``document.valid_from`` on (so ``as_of``
        still finds them); the document row takes the new content and ``revision + 1``
        and keeps its usage counters and supersede links.

        :returns: ``(new chunks with ids, ids of the chunks the revision retired)``.
        :raises OctomemError: no document has this id.
        """
        row = _one(tx, "SELECT revision, recalls, last_recalled_at, supersedes, superseded_by, "
                       "valid_to FROM documents WHERE id = ?", (document.id,))
        if row is None:
            raise OctomemError(f"document {document.id!r} does not exist; add it first")
        revised = replace(
            document, revision=row[0] + 1, recalls=row[1], last_recalled_at=row[2],
            supersedes=row[3], superseded_by=row[4], valid_to=row[5],
        )
        retired = [r[0] for r in tx.execute(
            "SELECT id FROM chunks WHERE document_id = ? AND valid_to IS NULL ORDER BY id",
            (document.id,))]
        tx.execute("UPDATE chunks SET valid_to = max(?, valid_from) WHERE document_id = ? "
                   "AND valid_to IS NULL", (float(revised.valid_from), document.id))
        assignments = ", ".join(f"{c} = ?" for c in DOC_COLUMNS.split(", ")[1:])
        params = stored_params(revised, chunks)
        tx.execute(f"UPDATE documents SET {assignments}, content_hash = ? WHERE id = ?",
                   (*params[1:], document.id))
        return self._insert_chunks(tx, revised, chunks), retired

    def delete_document(self, tx: apsw.Connection, document_id: str) -> list[int]:
        """Delete a document and its chunks (every revision) inside ``tx``; once the
        transaction commits, no copy of their text is left in the store's files: freed
        pages zeroed, the write-ahead log truncated, the snapshots removed (:mod:`.purge`).

        :returns: the removed chunk ids, ascending; empty when the document is unknown.
        """
        ids = [r[0] for r in tx.execute(
            "SELECT id FROM chunks WHERE document_id = ? ORDER BY id", (document_id,))]
        tx.execute("DELETE FROM chunks WHERE document_id = ?", (document_id,))
        tx.execute("DELETE FROM documents WHERE id = ?", (document_id,))
        if ids or tx.changes():
            # no trace of the text outside the tables once the transaction returns (.purge)
            self.before_commit(tx, purge.MARK, purge.mark)
        return ids

    def set_meta(self, tx: apsw.Connection, key: str, value: str) -> None:
        """Write ``key = value`` to the ``meta`` table inside ``tx`` (replacing any value)."""
        tx.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, str(value)))

    def size_bytes(self) -> int:
        """Return the size of the database file plus its write-ahead log, in bytes."""
        files = [self.path, self.path.with_name(self.path.name + "-wal")]
        return sum(f.stat().st_size for f in files if f.exists())

    def close(self) -> None:
        """Wait for the snapshots being written beside the file and the checkpoint under
        way, then close every thread's connection; later calls raise
        :class:`OctomemError`."""
        if self.snapshot_db is not None:
            wait_for_saves(self.snapshot_db)
        self.checkpoints.close()
        with self._lock:
            self._closed = True
            connections, self._connections = self._connections, []
            self._local = threading.local()
        for _, conn in connections:
            conn.close()


def build(options: SqliteStorageOptions, context: ArmContext) -> SqliteStorage:
    """Build the storage in ``<context.root>/<options.filename>``."""
    return SqliteStorage(Path(context.root) / options.filename, options.busy_timeout_ms,
                         options.snapshots)


def store_exists(options: SqliteStorageOptions, root: Path) -> bool:
    """Return whether ``<root>/<options.filename>`` exists (a read creates no store).

    An empty (0-byte) regular file is no store yet: SQLite would take it for an empty
    database and a read would write the schema into it (trial 14 F14); the first write
    does that instead. Every store octomem made holds at least its first page (4096
    bytes), written when the file is opened in WAL mode. Anything else at the path (a
    folder, a file that is not a database) exists, so that opening it says what it is.
    """
    path = Path(root) / options.filename
    try:
        info = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return False
    return info.st_size > 0 or not stat.S_ISREG(info.st_mode)


@hookimpl
def octomem_register_storages() -> list[ArmSpec]:
    """Offer the ``sqlite`` storage."""
    return [
        ArmSpec(
            kind="storage", name=NAME, factory=build, options_model=SqliteStorageOptions,
            store_exists=store_exists,
            description="SQLite file per scope (apsw, WAL, sqlite-vec loaded on every connection)",
        )
    ]
