"""The ``sqlite`` storage: documents, chunks and metadata in one SQLite file per scope.

Uses apsw rather than the stdlib ``sqlite3`` module, because the stdlib binding is
often built without extension loading and the sqlite-vec extension must be loaded on
*every* connection (datasette's ``prepare_connection`` rule). Each thread gets its own
connection (the MCP server calls from worker threads; an apsw connection must not be
used by two threads at once). The file is in WAL mode, so readers never block the
single writer, and waits up to ``busy_timeout_ms`` for a lock.

Also exports :func:`filter_sql`, which the ``fts5`` and ``sqlite-vec`` arms use to apply
:class:`~octomem.engine.types.Filters` inside their own SQL.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import apsw
import sqlite_vec
from octomem.engine.arms import ArmContext, ArmSpec
from octomem.engine.errors import IncompatibleArmsError, OctomemError
from octomem.engine.hookspecs import hookimpl
from octomem.engine.types import Chunk, Document, Filters
from pydantic import BaseModel, Field

NAME = "sqlite"
SCHEMA_VERSION = 1
_ITER_BATCH = 500
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

_SCHEMA = """
CREATE TABLE documents (
    id TEXT PRIMARY KEY, text TEXT NOT NULL, title TEXT, uri TEXT, kind TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',      -- JSON array of strings
    created_at REAL NOT NULL,             -- seconds since the Unix epoch, UTC
    event_time REAL,
    metadata TEXT NOT NULL DEFAULT '{}',  -- JSON object
    content_hash TEXT NOT NULL            -- sha256 hex of text, for find_documents
);
CREATE INDEX documents_content_hash ON documents(content_hash);
CREATE TABLE chunks (  -- AUTOINCREMENT: an id is never reused, so stale index rows stay stale
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL, text TEXT NOT NULL, kind TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]', created_at REAL NOT NULL, title TEXT, uri TEXT,
    metadata TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX chunks_document ON chunks(document_id, ordinal);
CREATE INDEX chunks_kind_created ON chunks(kind, created_at);
CREATE INDEX chunks_created ON chunks(created_at);
"""

_DOC_COLUMNS = "id, text, title, uri, kind, tags, created_at, event_time, metadata"
_CHUNK_FIELDS = "document_id, ordinal, text, kind, tags, created_at, title, uri, metadata"
_CHUNK_COLUMNS = "id, " + _CHUNK_FIELDS

# ``metadata[key] == value`` compared as Python's ``str(value)`` would render it, so SQL
# agrees with :meth:`Filters.matches` for strings, integers, floats and booleans.
_METADATA_SQL = (
    "(CASE json_type({a}.metadata, ?) WHEN 'true' THEN 'True' WHEN 'false' THEN 'False' "
    "ELSE CAST(json_extract({a}.metadata, ?) AS TEXT) END) = ?"
)


class SqliteStorageOptions(BaseModel, extra="forbid"):
    """Options of the ``sqlite`` storage (settings table ``[arms.sqlite]``)."""

    filename: str = Field(
        default="octomem.sqlite3", pattern=r"^[^/\\:]+$",
        description="database file name inside the scope directory",
    )
    busy_timeout_ms: int = Field(
        default=5000, ge=0, le=600_000, description="how long to wait for a lock, in milliseconds"
    )


def json_path(key: str) -> str:
    """Return the SQLite JSON path selecting the top-level member ``key`` (any characters)."""
    return '$."' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


def filter_sql(filters: Filters, alias: str) -> tuple[str, list[Any]]:
    """Build a ``WHERE`` fragment applying ``filters`` to rows of the ``chunks`` table.

    Kinds are an ``IN`` list; every tag must be present in the JSON ``tags`` array
    (one ``EXISTS`` over ``json_each`` per tag); times are ``created_at >= after`` and
    ``created_at < before`` in epoch seconds; metadata is equality of
    ``json_extract(metadata, '$."key"')`` rendered as text.

    :param filters: the restrictions; empty filters give ``"1"``.
    :param alias: the table name or alias of ``chunks`` in the surrounding query.
    :returns: ``(sql, params)``, the fragment and its positional parameters in order.
    :raises ValueError: ``alias`` is not a plain SQL identifier.
    """
    if not _IDENTIFIER.match(alias):
        raise ValueError(f"alias must be a SQL identifier, got {alias!r}")
    clauses: list[str] = []
    params: list[Any] = []
    if filters.kinds:
        clauses.append(f"{alias}.kind IN ({', '.join('?' * len(filters.kinds))})")
        params.extend(filters.kinds)
    for tag in dict.fromkeys(filters.tags):
        clauses.append(f"EXISTS (SELECT 1 FROM json_each({alias}.tags) AS t WHERE t.value = ?)")
        params.append(tag)
    if filters.created_after is not None:
        clauses.append(f"{alias}.created_at >= ?")
        params.append(float(filters.created_after))
    if filters.created_before is not None:
        clauses.append(f"{alias}.created_at < ?")
        params.append(float(filters.created_before))
    for key, value in filters.metadata.items():
        clauses.append(_METADATA_SQL.format(a=alias))
        params.extend([json_path(str(key)), json_path(str(key)), str(value)])
    return (" AND ".join(clauses) or "1"), params


def open_connection(path: Path, busy_timeout_ms: int) -> apsw.Connection:
    """Open ``path`` with sqlite-vec loaded, WAL journaling, foreign keys and a busy timeout.

    :raises OctomemError: this SQLite cannot load extensions, or sqlite-vec is missing.
    """
    conn = apsw.Connection(str(path))
    try:
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
    except (AttributeError, apsw.Error, OSError) as exc:
        conn.close()
        raise OctomemError(
            f"cannot load the sqlite-vec extension into SQLite ({type(exc).__name__}: {exc}); "
            "octomem needs an apsw build that allows loading extensions and the sqlite-vec "
            "package: pip install --force-reinstall apsw sqlite-vec"
        ) from exc
    conn.set_busy_timeout(busy_timeout_ms)
    conn.execute("PRAGMA journal_mode=WAL").fetchall()
    conn.execute("PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON")
    return conn


def require_sqlite(storage: Any, arm: str) -> SqliteStorage:
    """Return ``storage`` if it is the ``sqlite`` storage.

    :raises IncompatibleArmsError: it is another storage; names both arms.
    """
    if isinstance(storage, SqliteStorage):
        return storage
    other = getattr(storage, "name", type(storage).__name__)
    raise IncompatibleArmsError(f"arm {arm!r} requires storage 'sqlite', not {other!r}")


def _dumps(value: Any, what: str) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise OctomemError(f"{what} is not JSON-serialisable: {exc}") from exc


def _fields(columns: str, row: Sequence[Any]) -> dict[str, Any]:
    """Map a ``documents``/``chunks`` row to constructor arguments (JSON columns decoded)."""
    values = dict(zip(columns.split(", "), row, strict=True))
    values["tags"] = tuple(json.loads(values["tags"]))
    values["metadata"] = json.loads(values["metadata"])
    return values


def _one(conn: apsw.Connection, sql: str, params: Sequence[Any] = ()) -> Any:
    """Return the first row of ``sql``, or ``None``."""
    return conn.execute(sql, params).fetchone()


def _inherit(chunk: Chunk, document: Document) -> Chunk:
    """Copy the document's filterable fields onto ``chunk`` (chunk title/uri win if set)."""
    metadata: dict[str, Any] = {**document.metadata, **chunk.metadata}
    return replace(
        chunk, document_id=document.id, kind=document.kind, tags=tuple(document.tags),
        created_at=document.created_at, title=chunk.title or document.title,
        uri=chunk.uri or document.uri, metadata=metadata,
    )


def _content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _savepoint(conn: apsw.Connection) -> Iterator[apsw.Connection]:
    """Run a nested transaction block as a savepoint (the body of ``transaction()``)."""
    conn.execute("SAVEPOINT octomem_tx")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK TO octomem_tx")
        conn.execute("RELEASE octomem_tx")
        raise
    conn.execute("RELEASE octomem_tx")


class SqliteStorage:
    """Documents and chunks in one SQLite file, one apsw connection per thread.

    :param path: the database file; its directory is created if missing.
    :param busy_timeout_ms: how long a statement waits for a lock, in milliseconds.
    :raises OctomemError: extensions cannot be loaded, or the file's schema is newer
        than this version of octomem.
    """

    name = NAME

    def __init__(self, path: Path, busy_timeout_ms: int = 5000) -> None:
        self.path = Path(path)
        self.busy_timeout_ms = busy_timeout_ms
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[tuple[threading.Thread, apsw.Connection]] = []
        self._closed = False
        self._migrate()

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
            alive = [(t, c) for t, c in self._connections if t.is_alive()]
            for thread, dead in self._connections:
                if not thread.is_alive():
                    dead.close()
            self._connections = [*alive, (threading.current_thread(), conn)]
        self._local.conn = conn
        return conn

    @contextmanager
    def transaction(self) -> Iterator[apsw.Connection]:
        """Open a write transaction (``BEGIN IMMEDIATE``); a nested call uses a savepoint.

        Commits on normal exit and rolls back when the block raises.

        :returns: a context manager yielding the thread's apsw connection as ``tx``.
        :raises apsw.BusyError: another process held the write lock past the busy timeout.
        """
        conn = self.connection()
        if conn.in_transaction:
            yield from _savepoint(conn)
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:  # SQLite may already have rolled back (e.g. SQLITE_FULL)
                conn.execute("ROLLBACK")
            raise
        try:
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _migrate(self) -> None:
        with self.transaction() as tx:
            tx.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            row = _one(tx, "SELECT value FROM meta WHERE key = 'schema_version'")
            if row is None:
                tx.execute(_SCHEMA)
                self.set_meta(tx, "schema_version", str(SCHEMA_VERSION))
            elif int(row[0]) > SCHEMA_VERSION:
                raise OctomemError(
                    f"{self.path} has schema version {row[0]}, newer than the {SCHEMA_VERSION} "
                    "this octomem supports; upgrade octomem"
                )

    def add_document(
        self, tx: apsw.Connection, document: Document, chunks: Sequence[Chunk]
    ) -> list[Chunk]:
        """Store ``document`` and its chunks inside ``tx``.

        Each chunk takes the document's id, kind, tags and ``created_at``; its own title,
        uri and metadata keys win over the document's.

        :returns: the stored chunks, in the given order, with their new integer ids.
        :raises OctomemError: a document with this id exists (delete it first), or its
            metadata is not JSON-serialisable.
        """
        if _one(tx, "SELECT 1 FROM documents WHERE id = ?", (document.id,)):
            raise OctomemError(f"document {document.id!r} already exists; delete it first")
        tx.execute(
            f"INSERT INTO documents ({_DOC_COLUMNS}, content_hash) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (document.id, document.text, document.title, document.uri, document.kind,
             _dumps(list(document.tags), "tags"), float(document.created_at), document.event_time,
             _dumps(dict(document.metadata), f"metadata of document {document.id!r}"),
             _content_hash(document.text)),
        )
        stored: list[Chunk] = []
        for chunk in chunks:
            c = _inherit(chunk, document)
            row = _one(
                tx, f"INSERT INTO chunks ({_CHUNK_FIELDS}) VALUES (?,?,?,?,?,?,?,?,?) RETURNING id",
                (c.document_id, c.ordinal, c.text, c.kind, _dumps(list(c.tags), "tags"),
                 float(c.created_at), c.title, c.uri, _dumps(dict(c.metadata), "chunk metadata")),
            )
            stored.append(replace(c, id=row[0]))
        return stored

    def delete_document(self, tx: apsw.Connection, document_id: str) -> list[int]:
        """Delete a document and its chunks inside ``tx``.

        :returns: the removed chunk ids, ascending; empty when the document is unknown.
        """
        ids = [r[0] for r in tx.execute(
            "SELECT id FROM chunks WHERE document_id = ? ORDER BY id", (document_id,))]
        tx.execute("DELETE FROM chunks WHERE document_id = ?", (document_id,))
        tx.execute("DELETE FROM documents WHERE id = ?", (document_id,))
        return ids

    def get_document(self, document_id: str) -> Document | None:
        """Return the stored document with this id, or ``None``."""
        row = _one(self.connection(), f"SELECT {_DOC_COLUMNS} FROM documents WHERE id = ?",
                   (document_id,))
        return None if row is None else Document(**_fields(_DOC_COLUMNS, row))

    def find_documents(self, text: str) -> list[Document]:
        """Return the documents whose text is exactly ``text``, oldest ``created_at`` first."""
        rows = self.connection().execute(
            f"SELECT {_DOC_COLUMNS} FROM documents WHERE content_hash = ? AND text = ? "
            "ORDER BY created_at, rowid", (_content_hash(text), text)).fetchall()
        return [Document(**_fields(_DOC_COLUMNS, r)) for r in rows]

    def get_chunks(self, chunk_ids: Sequence[int]) -> list[Chunk]:
        """Return the chunks with these ids, in the given order; unknown ids are skipped."""
        if not chunk_ids:
            return []
        rows = self.connection().execute(
            f"SELECT {_CHUNK_COLUMNS} FROM chunks WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps([int(i) for i in chunk_ids]),)).fetchall()
        by_id = {r[0]: Chunk(**_fields(_CHUNK_COLUMNS, r)) for r in rows}
        return [by_id[i] for i in chunk_ids if i in by_id]

    def iter_chunks(self, filters: Filters | None = None) -> Iterator[Chunk]:
        """Yield every stored chunk passing ``filters``, in ascending id order.

        Reads in batches, so no statement stays open between yields.
        """
        where, params = filter_sql(filters or Filters(), "c")
        last: Any = 0
        while True:
            rows = self.connection().execute(
                f"SELECT {', '.join('c.' + col for col in _CHUNK_COLUMNS.split(', '))} "
                f"FROM chunks AS c WHERE c.id > ? AND {where} ORDER BY c.id LIMIT {_ITER_BATCH}",
                [last, *params]).fetchall()
            yield from (Chunk(**_fields(_CHUNK_COLUMNS, r)) for r in rows)
            if len(rows) < _ITER_BATCH:
                return
            last = rows[-1][0]

    def counts(self) -> dict[str, int]:
        """Return ``{"documents": n, "chunks": n}``."""
        conn = self.connection()
        return {t: _one(conn, f"SELECT count(*) FROM {t}")[0] for t in ("documents", "chunks")}

    def get_meta(self, key: str) -> str | None:
        """Read ``key`` from the ``meta`` table; ``None`` when unset."""
        row = _one(self.connection(), "SELECT value FROM meta WHERE key = ?", (key,))
        return None if row is None else str(row[0])

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
        """Close every thread's connection; later calls raise :class:`OctomemError`."""
        with self._lock:
            self._closed = True
            connections, self._connections = self._connections, []
            self._local = threading.local()
        for _, conn in connections:
            conn.close()


def build(options: SqliteStorageOptions, context: ArmContext) -> SqliteStorage:
    """Build the storage in ``<context.root>/<options.filename>``."""
    return SqliteStorage(Path(context.root) / options.filename, options.busy_timeout_ms)


@hookimpl
def octomem_register_storages() -> list[ArmSpec]:
    """Offer the ``sqlite`` storage."""
    return [
        ArmSpec(
            kind="storage", name=NAME, factory=build, options_model=SqliteStorageOptions,
            description="SQLite file per scope (apsw, WAL, sqlite-vec loaded on every connection)",
        )
    ]
