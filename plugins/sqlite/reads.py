"""The reads of the ``sqlite`` storage: documents, chunks, counts and metadata.

Mixed into :class:`~octomem.plugins.sqlite.storage.SqliteStorage`; these are the read
methods of :class:`~octomem.engine.arms.Storage` (and ``turn_chunks``, the neighbouring
turns of a conversation), each on the calling thread's connection. Once the storage's
filter index is loaded, chunks read recently come from RAM (:mod:`.chunk_cache`).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import apsw

from octomem.engine.turns import CONVERSATION, POSITION, TURN_KIND
from octomem.engine.types import Chunk, Document, Filters

from .filters import filter_sql
from .rows import CHUNK_COLUMNS, DOC_SELECT, chunk_of, content_hash, document_of
from .schema import HASH_KEY, HASH_PREFIX

if TYPE_CHECKING:
    from .chunk_cache import ChunkCache
    from .filter_index import FilterIndex

#: Chunks read per statement by :meth:`SqliteReads.iter_chunks`.
_ITER_BATCH = 500


def first_row(conn: apsw.Connection, sql: str, params: Sequence[Any] = ()) -> Any:
    """Return the first row of ``sql``, or ``None``."""
    return conn.execute(sql, params).fetchone()


class SqliteReads:
    """``get_document``, ``find_documents``, ``get_chunks``, ``iter_chunks``,
    ``turn_chunks``, ``counts``, ``get_meta`` and ``warm`` over the SQLite file."""

    _local: threading.local  # provided by SqliteStorage: the thread's connection, ...
    _fields: FilterIndex | None  # the in-RAM filter index, once made
    _cache: ChunkCache | None  # its chunk cache, made with it

    def connection(self) -> apsw.Connection:  # provided by SqliteStorage
        raise NotImplementedError

    def get_document(self, document_id: str) -> Document | None:
        """Return the stored document with this id, or ``None``."""
        row = first_row(self.connection(), f"SELECT {DOC_SELECT} FROM documents WHERE id = ?",
                        (document_id,))
        return None if row is None else document_of(row)

    def find_documents(self, text: str) -> list[Document]:
        """Return the documents whose text is exactly ``text``, oldest ``created_at`` first."""
        digest = content_hash(text)
        rows = self.connection().execute(  # a row keeping no text ('') has it in its chunk
            f"SELECT {DOC_SELECT} FROM documents WHERE {HASH_KEY} = ? AND content_hash = ? "
            "AND text IN (?, '') ORDER BY created_at, rowid",
            (digest[:HASH_PREFIX], digest, text)).fetchall()
        return [d for d in map(document_of, rows) if d.text == text]

    def warm(self) -> bool:
        """Read the chunks table's pages into the page cache (``count(*)`` walks its
        b-tree, decoding no row): chunk reads then never wait on the disk (issue 15,
        benchmarks/results/synthetic/2026-12-02/hotpath/). ``Pipeline.warm``'s last kind.

        :returns: True (something was loaded)."""
        self.connection().execute("SELECT count(*) FROM chunks NOT INDEXED").fetchall()
        return True

    def get_chunks(self, chunk_ids: Sequence[int]) -> list[Chunk]:
        """Return the chunks with these ids, in the given order; unknown ids are skipped.
        Once the filter index is loaded, recently read chunks come from RAM
        (:mod:`.chunk_cache`)."""
        if not chunk_ids:
            return []
        ids = [int(i) for i in chunk_ids]
        conn, fields, cache = self.connection(), self._fields, self._cache
        if fields is None or cache is None or not fields.loaded or (
                conn.in_transaction
                and conn.total_changes() != getattr(self._local, "begun", None)):
            return self._read_chunks(conn, ids)  # cold, or this transaction wrote rows
        return cache.read(conn, fields, ids, lambda missing: self._read_chunks(conn, missing))

    def _read_chunks(self, conn: apsw.Connection, ids: Sequence[int]) -> list[Chunk]:
        rows = conn.execute(
            f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(ids)),)).fetchall()
        by_id = {r[0]: chunk_of(r) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    def iter_chunks(self, filters: Filters | None = None) -> Iterator[Chunk]:
        """Yield every stored chunk passing ``filters``, in ascending id order.

        ``None`` yields every chunk, superseded ones and old revisions included (for
        arms that build their own index); ``Filters()`` yields the current ones.
        Reads in batches, so no statement stays open between yields.
        """
        where, params = filter_sql(filters or Filters(include_superseded=True), "c")
        last: Any = 0
        while True:
            rows = self.connection().execute(
                f"SELECT {', '.join('c.' + col for col in CHUNK_COLUMNS.split(', '))} "
                f"FROM chunks AS c WHERE c.id > ? AND {where} ORDER BY c.id LIMIT {_ITER_BATCH}",
                [last, *params]).fetchall()
            yield from (chunk_of(r) for r in rows)
            if len(rows) < _ITER_BATCH:
                return
            last = rows[-1][0]

    def turn_chunks(self, conversation: str, positions: Sequence[int]) -> list[Chunk]:
        """Return the chunks of ``conversation``'s turns at ``positions`` (kind ``TURN``),
        every revision, by position then id; from the ``chunks_turn`` index."""
        if not positions:
            return []
        rows = self.connection().execute(
            f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE kind = '{TURN_KIND}' AND "
            f"json_extract(metadata, '$.{CONVERSATION}') = ? AND "
            f"json_extract(metadata, '$.{POSITION}') IN (SELECT value FROM json_each(?)) "
            f"ORDER BY json_extract(metadata, '$.{POSITION}'), id",
            (conversation, json.dumps([int(p) for p in positions]))).fetchall()
        return [chunk_of(r) for r in rows]

    def counts(self) -> dict[str, int]:
        """Return ``{"documents": n, "chunks": n}``."""
        conn = self.connection()
        return {t: first_row(conn, f"SELECT count(*) FROM {t}")[0] for t in ("documents", "chunks")}

    def get_meta(self, key: str) -> str | None:
        """Read ``key`` from the ``meta`` table; ``None`` when unset."""
        row = first_row(self.connection(), "SELECT value FROM meta WHERE key = ?", (key,))
        return None if row is None else str(row[0])
