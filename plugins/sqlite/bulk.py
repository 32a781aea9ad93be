"""Batched writes of new documents: one ``executemany`` per table instead of a statement
per row (ingest excluding embedding spent ~30 % of its time in row-by-row ``execute``
calls, 10k realistic documents profiled at load ~9).

:class:`SqliteBulkWrites` gives :class:`~.storage.SqliteStorage` the optional
:class:`~octomem.engine.arms.BulkStorage`,
:class:`~octomem.engine.arms.PreparedBulkStorage` and
:class:`~octomem.engine.arms.TextBulkStorage` methods; the ids and rows written are those of
:meth:`~.storage.SqliteStorage.add_document` called once per document in the same order.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import apsw

from octomem.engine.sql.rows import chunk_params, document_params, inherit
from octomem.engine.types import Chunk, Document

from .rows import CHUNK_FIELDS, DOC_COLUMNS, stored_params
from .schema import log_inserted


def existing_ids(conn: apsw.Connection, ids: Sequence[str]) -> set[str]:
    """Return which of ``ids`` name a stored document (one query)."""
    if not ids:
        return set()
    rows = conn.execute("SELECT id FROM documents WHERE id IN (SELECT value FROM json_each(?))",
                        (json.dumps(list(ids)),))
    return {r[0] for r in rows}


#: The id the next ``chunks`` row will get: ``chunks.id`` is ``AUTOINCREMENT``, so a new
#: row's id is larger than any id the table ever held (``sqlite_sequence``) or holds.
_NEXT_CHUNK_ID = (
    "SELECT max(coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'chunks'), 0), "
    "coalesce((SELECT max(id) FROM chunks), 0)) + 1"
)


#: Most rows written per ``INSERT ... VALUES (...), (...)`` statement by :func:`insert_rows`
#: (fewer when SQLite's limit of bound values is lower). 10k ``documents`` and ``chunks``
#: rows of ``benchmarks/results/peers/harness.py``: 0.059 s CPU by ``executemany``, 0.060
#: at 64 rows, 0.056 at 256, 0.077 at 1,024 (parsing grows), load 6.7.
ROWS_PER_STATEMENT = 256


def insert_rows(tx: apsw.Connection, head: str, width: int,
                rows: Sequence[tuple[Any, ...]]) -> None:
    """Insert ``rows`` (``width`` values each, in order) by ``head`` + ``VALUES`` lists
    of up to :data:`ROWS_PER_STATEMENT` rows a statement: the same values bound as by
    ``executemany``, but SQLite then works a statement at a time (~1 ms for 256
    rows) without the GIL instead of a row at a time, so the worker thread preparing
    the next batch (:func:`octomem.engine.writes.prepared`) runs beside it rather than
    taking turns with it row by row.
    """
    per = max(1, min(ROWS_PER_STATEMENT,
                     tx.limit(apsw.SQLITE_LIMIT_VARIABLE_NUMBER, -1) // width))
    one = "(" + ",".join("?" * width) + ")"
    for start in range(0, len(rows), per):
        part = rows[start:start + per]
        tx.execute(f"{head} VALUES {','.join([one] * len(part))}",
                   tuple(chain.from_iterable(part)))


def insert_chunks(tx: apsw.Connection, rows: Sequence[tuple[Any, ...]]) -> list[int]:
    """Insert ``chunks`` rows (values of ``CHUNK_FIELDS``) inside ``tx`` and return their
    new ids, in order; the new rows are logged for the in-RAM filter index
    (:func:`~.schema.log_inserted`, one statement for the batch).

    The ids are not read back row by row (``RETURNING id`` was ~20 % of inserting 10k
    chunk rows: 0.137 -> 0.110 s CPU, load ~6): under ``AUTOINCREMENT`` each new row's
    id is larger than every id the table held before it, so the rows, inserted in order
    (:func:`insert_rows`), get strictly increasing ids from at least the next id taken
    before them; when the last one (``last_insert_rowid``) is that first id plus the number
    of rows less one, they are exactly the ids between. Otherwise (never seen) they are
    read back: the rows with an id from that first one on, in id order, are exactly these.
    """
    first = int(tx.execute(_NEXT_CHUNK_ID).get)
    insert_rows(tx, f"INSERT INTO chunks ({CHUNK_FIELDS})", 12, rows)
    last = tx.last_insert_rowid()
    if last - first + 1 == len(rows):
        ids = list(range(first, last + 1))
    else:
        ids = [r[0] for r in tx.execute("SELECT id FROM chunks WHERE id >= ? ORDER BY id",
                                        (first,))]
    log_inserted(tx, ids)
    return ids


@dataclass(slots=True)
class BulkRows:
    """What :func:`write_rows` writes for a run of new documents (:func:`bulk_rows`).

    :param documents: per document, the values of ``documents`` (``DOC_COLUMNS`` and
        ``content_hash``).
    :param chunks: every stored chunk, in order (its document's fields inherited), ids
        not set yet; ``None`` when not made (:func:`bulk_rows_of_texts`).
    :param rows: per chunk of ``chunks``, the values of ``CHUNK_FIELDS``.
    :param sizes: per document, how many of ``chunks`` are its own.
    """

    documents: list[tuple[Any, ...]]
    chunks: list[Chunk] | None
    rows: list[tuple[Any, ...]]
    sizes: list[int]


def bulk_rows(pairs: Sequence[tuple[Document, Sequence[Chunk]]]) -> BulkRows:
    """Return the rows of new documents and their chunks, as :func:`add_documents` writes
    them (Python only: no connection; the pipeline's worker thread builds them while the
    batch before is written).

    :raises OctomemError: metadata or tags that are not JSON-serialisable.
    """
    documents: list[tuple[Any, ...]] = []
    chunks: list[Chunk] = []
    rows: list[tuple[Any, ...]] = []
    for document, own in pairs:
        documents.append(params := stored_params(document, own))
        tags_json, metadata_json = params[5], params[8]  # a chunk inherits them
        for chunk in own:
            chunks.append(inherited := inherit(chunk, document))
            same = not chunk.metadata or chunk.metadata is document.metadata
            rows.append(chunk_params(inherited, tags_json, metadata_json if same else None))
    return BulkRows(documents, chunks, rows, [len(own) for _, own in pairs])


def bulk_rows_of_texts(documents: Sequence[Document], texts: Sequence[Sequence[str]]) -> BulkRows:
    """Return :func:`bulk_rows`' rows of new documents each stored as the chunks of its
    texts (ordinal ``i`` holds ``texts[k][i]``; every other field the document's, as
    :meth:`~octomem.engine.pipeline.Pipeline._chunk` makes them), without a
    :class:`Chunk` made per chunk (``chunks`` is ``None``; :func:`write_text_rows` returns
    the new ids): the same values (building a 1,024-document batch of the 10k ingest
    benchmark's: 3.0 -> 1.9 ms, ``benchmarks/results/ingest/2026-12-04-round15``).

    :raises OctomemError: metadata or tags that are not JSON-serialisable.
    """
    out: list[tuple[Any, ...]] = []
    rows: list[tuple[Any, ...]] = []
    append_row = rows.append
    for document, own in zip(documents, texts, strict=True):
        out.append(params := document_params(
            document, "" if len(own) == 1 and own[0] == document.text else None))
        doc_id, _, title, uri, kind, tags_json, created, _, metadata_json = params[:9]
        start, valid_to, stop = float(document.valid_from), document.valid_to, \
            int(document.revision)
        for i, text in enumerate(own):
            append_row((doc_id, i, text, kind, tags_json, created, title, uri, metadata_json,
                        start, valid_to, stop))
    return BulkRows(out, None, rows, [len(own) for own in texts])


def write_rows(tx: apsw.Connection, rows: BulkRows) -> list[list[Chunk]]:
    """Insert :func:`bulk_rows`' rows inside ``tx`` (one statement per table and
    :data:`ROWS_PER_STATEMENT` rows) and set the chunks' new ids.

    :returns: per document, its stored chunks in the given order with their new ids.
    :raises ValueError: ``rows`` are :func:`bulk_rows_of_texts`' (no chunks: written by
        :func:`write_text_rows`); nothing is written.
    """
    chunks = rows.chunks
    if chunks is None:
        raise ValueError("rows of texts have no chunks: write them by write_text_rows")
    insert_rows(tx, f"INSERT INTO documents ({DOC_COLUMNS}, content_hash)", 16, rows.documents)
    if not chunks:
        return [[] for _ in rows.sizes]
    ids = insert_chunks(tx, rows.rows)
    for chunk, i in zip(chunks, ids, strict=True):
        # the ids SQLite gave: set on these new, not yet shared values (a frozen dataclass
        # is written this way by its own __init__), not copied by dataclasses.replace
        object.__setattr__(chunk, "id", i)
    stored = iter(chunks)
    return [[next(stored) for _ in range(size)] for size in rows.sizes]


def write_text_rows(tx: apsw.Connection, rows: BulkRows) -> list[int]:
    """Insert :func:`bulk_rows_of_texts`' rows inside ``tx`` as :func:`write_rows` does.

    :returns: the new chunk ids, in the rows' order.
    """
    insert_rows(tx, f"INSERT INTO documents ({DOC_COLUMNS}, content_hash)", 16, rows.documents)
    return insert_chunks(tx, rows.rows) if rows.rows else []


def add_documents(
    tx: apsw.Connection, pairs: Sequence[tuple[Document, Sequence[Chunk]]]
) -> list[list[Chunk]]:
    """Store new documents and their chunks inside ``tx``, as ``add_document`` would one
    by one (the caller has checked that no id exists and that ids are distinct):
    :func:`bulk_rows` then :func:`write_rows`.

    :returns: per document, its stored chunks in the given order with their new ids.
    :raises OctomemError: metadata or tags that are not JSON-serialisable (nothing of
        the transaction is kept when the caller lets it roll back).
    """
    return write_rows(tx, bulk_rows(pairs))


class SqliteBulkWrites:
    """The :class:`~octomem.engine.arms.BulkStorage` methods of the SQLite storage (a mixin:
    ``self.connection()`` is the storage's)."""

    def connection(self) -> apsw.Connection:  # provided by SqliteStorage
        raise NotImplementedError

    def add_documents(
        self, tx: apsw.Connection, pairs: Sequence[tuple[Document, Sequence[Chunk]]]
    ) -> list[list[Chunk]]:
        """Store new documents and their chunks inside ``tx`` in one statement per table
        (:func:`add_documents`: the same rows and ids as ``add_document`` per pair).

        :returns: per document, its stored chunks with their new integer ids.
        :raises OctomemError: metadata that is not JSON-serialisable.
        """
        return add_documents(tx, pairs)

    def bulk_rows(self, pairs: Sequence[tuple[Document, Sequence[Chunk]]]) -> BulkRows:
        """Return the rows :meth:`add_rows` writes for ``pairs`` (:func:`bulk_rows`: no
        connection used, any thread).

        :raises OctomemError: metadata that is not JSON-serialisable.
        """
        return bulk_rows(pairs)

    def add_rows(self, tx: apsw.Connection, pairs: Sequence[tuple[Document, Sequence[Chunk]]],
                 rows: BulkRows) -> list[list[Chunk]]:
        """Store ``pairs`` inside ``tx`` from their :meth:`bulk_rows` (:func:`write_rows`):
        the same rows and ids as :meth:`add_documents`.

        :returns: per document, its stored chunks with their new integer ids.
        """
        return write_rows(tx, rows)

    def bulk_text_rows(self, documents: Sequence[Document],
                       texts: Sequence[Sequence[str]]) -> BulkRows:
        """Return the rows :meth:`add_text_rows` writes for new documents stored as the
        chunks of ``texts`` (:func:`bulk_rows_of_texts`: no connection used, any thread).

        :raises OctomemError: metadata that is not JSON-serialisable.
        """
        return bulk_rows_of_texts(documents, texts)

    def add_text_rows(self, tx: apsw.Connection, rows: BulkRows) -> list[int]:
        """Store the documents of :meth:`bulk_text_rows`' ``rows`` inside ``tx``
        (:func:`write_text_rows`).

        :returns: the new chunk ids, every document's in order, the documents in order.
        """
        return write_text_rows(tx, rows)

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        """Return which of ``ids`` name a stored document (one query)."""
        return existing_ids(self.connection(), ids)
