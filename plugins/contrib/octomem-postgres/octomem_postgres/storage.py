"""The ``postgres`` storage: documents, chunks and metadata in PostgreSQL, one schema per scope.

Connections come from psycopg 3, one per thread (the MCP server calls from worker
threads; a transaction must not be shared by two threads), in autocommit mode so that a
read outside :meth:`PostgresStorage.transaction` never holds a transaction open. Each
connection's ``search_path`` is the scope's schema (:func:`~.schema.schema_name`) then
``public`` (where pgvector's type lives).

Writes: :meth:`~PostgresStorage.transaction` begins a transaction and takes a
transaction-level advisory lock on the scope, so writers to one scope run one at a time —
the single-writer semantics the ``sqlite`` storage has with ``BEGIN IMMEDIATE``, which
the memory layer relies on (e.g. re-reading a statement "under the write lock" before
superseding it). Readers never wait. A nested call opens a savepoint.

Failures of the server: every statement runs through the cursors of
:func:`.failures.cursor_class` (the connection's ``cursor_factory``) and every transaction
through
:meth:`~PostgresStorage.transaction`, so a :class:`psycopg.OperationalError` (the server
stopped or restarted: ``AdminShutdown``, a dropped socket; a lock wait past
``lock_timeout_ms``) becomes a one-line :class:`~octomem.engine.errors.OctomemError` naming
the setting, never an unexpected exception; a dead connection is dropped, so the thread's
next call connects again.

Also exports :func:`filter_sql` (the ``postgres-fts`` and ``pgvector`` arms put it in
their own queries) and :func:`require_postgres`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from octomem.engine.errors import IncompatibleArmsError, OctomemError, StoreUnavailableError
from octomem.engine.types import Chunk, Document, Filters

from .failures import cursor_class, display_uri, failure, reason
from .filters import filter_sql
from .history import PostgresHistory
from .rows import (
    CHUNK_COLUMNS,
    CHUNK_FIELDS,
    CHUNK_VALUES,
    DOC_COLUMNS,
    DOC_VALUES,
    chunk_of,
    chunk_params,
    content_hash,
    document_of,
    document_params,
    inherit,
    qualified,
)
from .schema import lock_key, mark, migrate, scope_schema, store_exists

#: ``psycopg.pq.TransactionStatus.IDLE``: no transaction open on the connection (libpq's
#: ``PQTRANS_IDLE``).
IDLE = 0

if TYPE_CHECKING:  # psycopg (~0.1-0.4 s to import) loads when a connection is made: every
    import psycopg  # octomem process loads this plugin, most never use PostgreSQL

__all__ = ["NAME", "PostgresStorage", "PostgresStorageOptions", "filter_sql", "require_postgres",
           "store_exists"]

NAME = "postgres"
_ITER_BATCH = 500
ConnectHook = Callable[["psycopg.Connection"], None]


class PostgresStorageOptions(BaseModel, extra="forbid", defer_build=True, allow_inf_nan=False):
    """Options of the ``postgres`` storage (settings table ``[arms.postgres]``)."""

    uri: str = Field(
        min_length=1,
        description="libpq connection URI, e.g. postgresql://octomem@db.internal:5432/octomem; "
        "keep the password out of it (~/.pgpass or PGPASSWORD)",
    )
    schema_prefix: str = Field(
        default="octomem", pattern=r"^[a-z][a-z0-9_]{0,29}$",
        description="start of each scope's schema name (<prefix>_<folder>_<hash>)",
    )
    connect_timeout_s: int = Field(
        default=10, ge=1, le=600, description="how long to wait for a connection, in seconds"
    )
    lock_timeout_ms: int = Field(
        default=5000, ge=0, le=600_000,
        description="how long a write waits for the scope's write lock, in ms (0: forever)",
    )


def require_postgres(storage: Any, arm: str) -> PostgresStorage:
    """Return ``storage`` if it is the ``postgres`` storage.

    :raises IncompatibleArmsError: it is another storage; names both arms.
    """
    if isinstance(storage, PostgresStorage):
        return storage
    other = getattr(storage, "name", type(storage).__name__)
    raise IncompatibleArmsError(f"arm {arm!r} requires storage 'postgres', not {other!r}")


class PostgresStorage(PostgresHistory):
    """Documents and chunks of one scope in one PostgreSQL schema.

    Implements the :class:`~octomem.engine.arms.Storage` Protocol and the optional
    :class:`~octomem.engine.arms.VersionedStorage` methods (see :mod:`.history`).

    :param root: the scope directory; its absolute path names the schema.
    :raises OctomemError: the server cannot be reached, or the schema is newer than
        this plugin.
    """

    name = NAME

    def __init__(self, options: PostgresStorageOptions, root: Path) -> None:
        self.options = options
        self.root = Path(root)
        self.schema = scope_schema(self.root, options.schema_prefix)
        self.where = f"{display_uri(options.uri)} schema {self.schema}"
        self._lock_key = lock_key(f"octomem-postgres:scope:{self.schema}")
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[tuple[threading.Thread, psycopg.Connection]] = []
        self._hooks: list[ConnectHook] = []
        self._closed = False
        with self.transaction() as tx:
            migrate(tx, self.schema, self.root)
        mark(self.root, self.schema)

    # ---- connections ----------------------------------------------------------------

    def _open(self) -> psycopg.Connection:
        import psycopg

        options = self.options
        try:
            conn = psycopg.connect(options.uri, autocommit=True, application_name="octomem",
                                   connect_timeout=options.connect_timeout_s,
                                   cursor_factory=cursor_class(self._failed))
        except psycopg.Error as exc:
            raise StoreUnavailableError(
                f"cannot connect to PostgreSQL at {display_uri(options.uri)} (setting "
                f"arms.postgres.uri): {reason(exc)}") from exc
        conn.execute(f'SET search_path TO "{self.schema}", public')
        conn.execute(f"SET lock_timeout = {int(options.lock_timeout_ms)}")
        return conn

    def _failed(self, exc: psycopg.OperationalError, conn: psycopg.Connection) -> OctomemError:
        """Return the one-line error for ``exc`` raised on ``conn`` (:func:`.failures.failure`);
        drop ``conn`` if the server closed it (the thread's next call opens a new one)."""
        closed = conn.closed
        if closed:
            self._drop(conn)
        return failure(exc, self.options.uri, self.schema, self.options.lock_timeout_ms,
                       closed=closed)

    def _drop(self, conn: psycopg.Connection) -> None:
        """Forget ``conn`` (closed by the server) so the next call of its thread reconnects."""
        with self._lock:
            self._connections = [(t, c) for t, c in self._connections if c is not conn]
        if getattr(self._local, "conn", None) is conn:
            self._local.conn = None
        conn.close()

    def connection(self) -> psycopg.Connection:
        """Return the calling thread's connection, opening it on first use; connect hooks
        added since (e.g. pgvector's type adapter) are applied first.

        :raises OctomemError: the storage is closed, or the server cannot be reached.
        """
        conn: psycopg.Connection | None = getattr(self._local, "conn", None)
        if conn is None or conn.closed:
            with self._lock:
                if self._closed:
                    raise OctomemError(f"storage {self.where} is closed")
                conn = self._open()
                alive = [(t, c) for t, c in self._connections if t.is_alive()]
                for thread, dead in self._connections:
                    if not thread.is_alive():
                        dead.close()
                self._connections = [*alive, (threading.current_thread(), conn)]
            self._local.conn, self._local.hooks = conn, 0
        while self._local.hooks < len(self._hooks):
            self._hooks[self._local.hooks](conn)
            self._local.hooks += 1
        return conn

    def add_connect_hook(self, hook: ConnectHook) -> None:
        """Run ``hook(connection)`` on every connection of this storage before its next use."""
        with self._lock:
            if hook not in self._hooks:
                self._hooks.append(hook)

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection]:
        """Open a write transaction holding the scope's write lock; a nested call opens a
        savepoint. Commits on normal exit and rolls back when the block raises.

        :returns: a context manager yielding the thread's connection as ``tx``.
        :raises StoreBusyError: another writer held the scope's lock past
            ``lock_timeout_ms``.
        :raises StoreUnavailableError: the server closed the connection or failed the
            transaction (:meth:`_failed`).
        """
        import psycopg

        conn = self.connection()
        outer = conn.info.transaction_status == IDLE
        try:
            with conn.transaction():
                if outer:
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._lock_key,))
                yield conn
        except psycopg.OperationalError as exc:  # BEGIN, COMMIT, a pipeline's sync
            raise self._failed(exc, conn) from exc

    # ---- documents and chunks ----------------------------------------------------------

    def _insert_chunks(self, tx: psycopg.Connection, document: Document,
                       chunks: Sequence[Chunk], document_row: tuple[Any, ...] | None = None
                       ) -> list[Chunk]:
        """Insert the chunks (and first ``document_row``, when given) in one pipelined round
        trip; return the chunks with their new ids, in the given order."""
        inherited = [inherit(chunk, document) for chunk in chunks]
        with tx.pipeline():
            if document_row is not None:
                tx.execute(f"INSERT INTO documents ({DOC_COLUMNS}, content_hash) "
                           f"VALUES ({DOC_VALUES})", document_row)
            cursors = [tx.execute(f"INSERT INTO chunks ({CHUNK_FIELDS}) VALUES ({CHUNK_VALUES}) "
                                  "RETURNING id", chunk_params(c)) for c in inherited]
        return [replace(c, id=int(cur.fetchone()[0]))  # type: ignore[index]
                for c, cur in zip(inherited, cursors, strict=True)]

    def add_document(self, tx: psycopg.Connection, document: Document,
                     chunks: Sequence[Chunk]) -> list[Chunk]:
        """Store ``document`` and its chunks inside ``tx``.

        Each chunk takes the document's id, kind, tags, ``created_at``, validity and
        revision; its own title, uri and metadata keys win over the document's. History
        and usage fields of ``document`` are stored as given, so an import restores them.

        :returns: the stored chunks, in the given order, with their new integer ids.
        :raises OctomemError: a document with this id exists (delete it first), its
            metadata is not JSON-serialisable, or its text holds a NUL character.
        """
        row = document_params(document)
        if tx.execute("SELECT 1 FROM documents WHERE id = %s", (document.id,)).fetchone():
            raise OctomemError(f"document {document.id!r} already exists; delete it first")
        return self._insert_chunks(tx, document, chunks, row)

    def revise_document(self, tx: psycopg.Connection, document: Document,
                        chunks: Sequence[Chunk]) -> tuple[list[Chunk], list[int]]:
        """Store changed content of an existing document as its next revision, inside ``tx``.

        The current chunks stay, superseded from ``document.valid_from`` on (so ``as_of``
        still finds them); the document row takes the new content and ``revision + 1``
        and keeps its usage counters and supersede links.

        :returns: ``(new chunks with ids, ids of the chunks the revision retired)``.
        :raises OctomemError: no document has this id.
        """
        row = tx.execute("SELECT revision, recalls, last_recalled_at, supersedes, superseded_by, "
                         "valid_to FROM documents WHERE id = %s", (document.id,)).fetchone()
        if row is None:
            raise OctomemError(f"document {document.id!r} does not exist; add it first")
        revised = replace(document, revision=row[0] + 1, recalls=row[1], last_recalled_at=row[2],
                          supersedes=row[3], superseded_by=row[4], valid_to=row[5])
        retired = tx.execute(
            "UPDATE chunks SET valid_to = greatest(%s, valid_from) WHERE document_id = %s "
            "AND valid_to IS NULL RETURNING id",
            (float(revised.valid_from), document.id)).fetchall()
        columns = DOC_COLUMNS.split(", ")[1:] + ["content_hash"]
        placeholders = DOC_VALUES.split(", ")[1:]
        assignments = ", ".join(f"{c} = {p}" for c, p in zip(columns, placeholders, strict=True))
        tx.execute(f"UPDATE documents SET {assignments} WHERE id = %s",
                   (*document_params(revised)[1:], document.id))
        return self._insert_chunks(tx, revised, chunks), sorted(r[0] for r in retired)

    def delete_document(self, tx: psycopg.Connection, document_id: str) -> list[int]:
        """Delete a document and its chunks (every revision) inside ``tx``; index rows of
        the ``postgres-fts`` and ``pgvector`` arms go with them (foreign keys cascade).

        :returns: the removed chunk ids, ascending; empty when the document is unknown.
        """
        rows = tx.execute("DELETE FROM chunks WHERE document_id = %s RETURNING id",
                          (document_id,)).fetchall()
        tx.execute("DELETE FROM documents WHERE id = %s", (document_id,))
        return sorted(r[0] for r in rows)

    def get_document(self, document_id: str) -> Document | None:
        """Return the stored document with this id, or ``None``."""
        row = self.connection().execute(
            f"SELECT {DOC_COLUMNS} FROM documents WHERE id = %s", (document_id,)).fetchone()
        return None if row is None else document_of(row)

    def find_documents(self, text: str) -> list[Document]:
        """Return the documents whose text is exactly ``text``, oldest ``created_at`` first."""
        if "\x00" in text:
            return []
        rows = self.connection().execute(
            f"SELECT {DOC_COLUMNS} FROM documents WHERE content_hash = %s AND text = %s "
            "ORDER BY created_at, seq", (content_hash(text), text)).fetchall()
        return [document_of(r) for r in rows]

    def get_chunks(self, chunk_ids: Sequence[int]) -> list[Chunk]:
        """Return the chunks with these ids, in the given order; unknown ids are skipped."""
        if not chunk_ids:
            return []
        rows = self.connection().execute(
            f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE id = ANY(%s)",
            ([int(i) for i in chunk_ids],)).fetchall()
        by_id = {r[0]: chunk_of(r) for r in rows}
        return [by_id[i] for i in chunk_ids if i in by_id]

    def iter_chunks(self, filters: Filters | None = None) -> Iterator[Chunk]:
        """Yield every stored chunk passing ``filters``, in ascending id order.

        ``None`` yields every chunk, superseded ones and old revisions included;
        ``Filters()`` yields the current ones. Reads in batches of 500 (keyset paging),
        so no statement stays open between yields.
        """
        where, params = filter_sql(filters or Filters(include_superseded=True), "c")
        last = 0
        while True:
            rows = self.connection().execute(
                f"SELECT {qualified(CHUNK_COLUMNS, 'c')} FROM chunks AS c WHERE c.id > %s "
                f"AND {where} ORDER BY c.id LIMIT {_ITER_BATCH}", [last, *params]).fetchall()
            yield from (chunk_of(r) for r in rows)
            if len(rows) < _ITER_BATCH:
                return
            last = rows[-1][0]

    def row_count(self, table: str) -> int:
        """Return the exact row count of a counted table (``documents``, ``chunks``, a
        vector table) from ``row_counts``; 0 for a table that is not counted."""
        row = self.connection().execute(
            "SELECT n FROM row_counts WHERE name = %s", (table,)).fetchone()
        return 0 if row is None else int(row[0])

    def counts(self) -> dict[str, int]:
        """Return ``{"documents": n, "chunks": n}`` (exact, from trigger-kept counters)."""
        rows: dict[str, int] = dict(self.connection().execute(
            "SELECT name, n FROM row_counts WHERE name IN ('documents', 'chunks')").fetchall())
        return {t: int(rows.get(t, 0)) for t in ("documents", "chunks")}

    def get_meta(self, key: str) -> str | None:
        """Read ``key`` from the ``meta`` table; ``None`` when unset."""
        row = self.connection().execute("SELECT value FROM meta WHERE key = %s", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, tx: psycopg.Connection, key: str, value: str) -> None:
        """Write ``key = value`` to the ``meta`` table inside ``tx`` (replacing any value)."""
        tx.execute("INSERT INTO meta (key, value) VALUES (%s, %s) "
                   "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", (key, str(value)))

    def size_bytes(self) -> int:
        """Return the size of the scope's tables with their indexes and TOAST, in bytes."""
        row = self.connection().execute(
            "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class AS c "
            "JOIN pg_namespace AS n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind = 'r'", (self.schema,)).fetchone()
        return int(row[0]) if row else 0

    def close(self) -> None:
        """Close every thread's connection; later calls raise :class:`OctomemError`."""
        with self._lock:
            self._closed = True
            connections, self._connections = self._connections, []
            self._local = threading.local()
        for _, conn in connections:
            conn.close()
