"""The Protocols of the storage arm kind: :class:`Storage` and its optional capabilities.

A storage holds documents, chunks and metadata, and the write transaction the keyword
and semantic arms write their index rows through. :class:`BulkStorage` (ingest in one
batch), :class:`VersionedStorage` (statement history, recall counters, forget log) and
:class:`CallLogStorage` (the MCP call log) are what memory semantics need beyond plain
search; :class:`PreparedBulkStorage` splits a bulk write in two (rows built, then written),
:class:`TextBulkStorage` builds those rows from the chunks' texts.
The other arm kinds and the spec a plugin registers an arm with:
:mod:`octomem.engine.arms` (which re-exports these names).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

from .types import CallRecord, Chunk, Document, Filters, ForgetRecord


@runtime_checkable
class Storage(Protocol):
    """Where documents, chunks and metadata live.

    Writes happen inside :meth:`transaction`; the keyword and semantic arms that
    require this storage write their index rows through the same transaction object.
    """

    name: str

    def transaction(self) -> AbstractContextManager[Any]:
        """Open one write transaction: commit on normal exit, roll back on an exception."""
        ...

    def add_document(self, tx: Any, document: Document, chunks: Sequence[Chunk]) -> list[Chunk]:
        """Store a document and its chunks; return the chunks with their new integer ids."""
        ...

    def delete_document(self, tx: Any, document_id: str) -> list[int]:
        """Delete a document and its chunks; return the removed chunk ids (empty if none)."""
        ...

    def get_document(self, document_id: str) -> Document | None:
        """Return the stored document, or ``None``."""
        ...

    def find_documents(self, text: str) -> list[Document]:
        """Return the documents whose text is exactly ``text``, oldest first."""
        ...

    def get_chunks(self, chunk_ids: Sequence[int]) -> list[Chunk]:
        """Return the chunks with these ids, in the given order; unknown ids are skipped."""
        ...

    def iter_chunks(self, filters: Filters | None = None) -> Iterator[Chunk]:
        """Yield every stored chunk passing ``filters``, in id order."""
        ...

    def counts(self) -> dict[str, int]:
        """Return ``{"documents": n, "chunks": n}``."""
        ...

    def get_meta(self, key: str) -> str | None:
        """Read a value from the storage's key-value metadata table."""
        ...

    def set_meta(self, tx: Any, key: str, value: str) -> None:
        """Write a value to the metadata table inside ``tx``."""
        ...

    def size_bytes(self) -> int:
        """Return the storage's size on disk in bytes (0 for in-memory)."""
        ...

    def close(self) -> None:
        """Release connections and files."""
        ...


@runtime_checkable
class BulkStorage(Storage, Protocol):
    """Optional capability of a storage: new documents written in one batch (ingest).

    The pipeline writes runs of new documents with it, otherwise one ``add_document``
    per document; the stored rows and the ids must be the same either way.
    """

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        """Return which of ``ids`` name a stored document."""
        ...

    def add_documents(
        self, tx: Any, pairs: Sequence[tuple[Document, Sequence[Chunk]]]
    ) -> list[list[Chunk]]:
        """Store new documents (no id stored yet, ids distinct) and their chunks inside
        ``tx``, as ``add_document`` called per pair in order would.

        :returns: per document, its stored chunks with their new ids, in the given order.
        """
        ...


@runtime_checkable
class PreparedBulkStorage(BulkStorage, Protocol):
    """Optional capability of a bulk storage: :meth:`BulkStorage.add_documents` in two
    halves, so that the Python of a batch's rows runs in the pipeline's worker thread
    while the caller's thread writes the batch before (only SQL left in the transaction).
    """

    def bulk_rows(self, pairs: Sequence[tuple[Document, Sequence[Chunk]]]) -> Any:
        """Return what :meth:`add_rows` writes for ``pairs``: built without touching the
        store (any thread, no transaction), for documents with distinct ids.

        :raises Exception: whatever ``add_documents`` would raise for these values (e.g.
            metadata that is not JSON-serialisable); the caller then writes them by
            ``add_documents``, which raises it inside the transaction.
        """
        ...

    def add_rows(
        self, tx: Any, pairs: Sequence[tuple[Document, Sequence[Chunk]]], rows: Any
    ) -> list[list[Chunk]]:
        """Store ``pairs`` (none of their ids stored yet) inside ``tx`` from ``rows``, made
        by :meth:`bulk_rows` of the same ``pairs``: what ``add_documents(tx, pairs)`` stores
        and returns."""
        ...


@runtime_checkable
class TextBulkStorage(PreparedBulkStorage, Protocol):
    """Optional capability of a prepared bulk storage: a batch's rows built from each
    document and its chunks' texts, without the pipeline's chunks made first (the 10k
    ingest benchmark: the worker's chunks and rows 0.066 -> 0.044 s of CPU,
    ``benchmarks/results/ingest/2026-12-03-round12``), and stored without a
    :class:`Chunk` per stored chunk either (~1/3 of building a batch's rows:
    ``benchmarks/results/ingest/2026-12-04-round15``).
    """

    def bulk_text_rows(self, documents: Sequence[Document],
                       texts: Sequence[Sequence[str]]) -> Any:
        """Return what :meth:`add_text_rows` writes for new documents (distinct ids), each
        stored as the chunks of its ``texts`` (ordinal ``i`` holds ``texts[k][i]``, every
        other field the document's): the rows :meth:`PreparedBulkStorage.bulk_rows` gives
        for those chunks as the pipeline makes them. Built without touching the store.

        :raises Exception: as :meth:`PreparedBulkStorage.bulk_rows`.
        """
        ...

    def add_text_rows(self, tx: Any, rows: Any) -> list[int]:
        """Store the documents of ``rows`` (:meth:`bulk_text_rows`; none of their ids
        stored yet) inside ``tx``.

        :returns: the new chunk ids, every document's in order, the documents in order
            (no :class:`Chunk` made: the keyword arm reads what it needs by id,
            :class:`~octomem.engine.arms.StoredKeywordIndex`, or from
            :meth:`Storage.get_chunks` inside ``tx``).
        """
        ...


@runtime_checkable
class VersionedStorage(Storage, Protocol):
    """Optional capability of a storage: statement history, recall counters, forget log.

    Memory semantics (supersede, ``as_of``, revisions, ``recalls``, ``forget`` with a
    reason) need it; a storage without it still serves plain search. Stored chunks carry
    ``valid_from``/``valid_to`` so that keyword and semantic arms apply
    :class:`~octomem.engine.types.Filters` validity rules inside their searches (by
    default only chunks with ``valid_to is None`` pass).
    """

    def supersede(
        self, tx: Any, document_id: str, superseded_by: str, valid_to: float
    ) -> list[int]:
        """Mark a document (and its current chunks) superseded from ``valid_to`` (epoch s) on.

        :returns: ids of the chunks whose validity changed.
        """
        ...

    def hand_on(self, tx: Any, document_id: str, successor: str | None) -> list[str]:
        """Before ``document_id`` is forgotten: make the documents it superseded
        superseded by ``successor`` instead, or current again (with their current
        revision's chunks) when ``successor`` is ``None``.

        :returns: ids of the documents handed on, ascending.
        """
        ...

    def revise_document(
        self, tx: Any, document: Document, chunks: Sequence[Chunk]
    ) -> tuple[list[Chunk], list[int]]:
        """Store changed content of an existing document as its next revision.

        :returns: ``(new chunks with ids, ids of the chunks retired, kept with valid_to)``.
        """
        ...

    def iter_documents(
        self, kinds: Sequence[str] = (), include_superseded: bool = False
    ) -> Iterator[Document]:
        """Yield documents newest ``created_at`` first (current ones unless asked)."""
        ...

    def document_chunks(self, document_id: str) -> list[Chunk]:
        """Return every chunk of a document, every revision, by revision then ordinal."""
        ...

    def noncurrent_chunk_ids(self, limit: int | None = None) -> list[int]:
        """Return ids of chunks whose ``valid_to`` is set, ascending (at most ``limit``)."""
        ...

    def record_recalls(self, tx: Any, document_ids: Sequence[str], at: float) -> None:
        """Add one to each document's ``recalls`` and set ``last_recalled_at = at``."""
        ...

    def record_forgotten(self, tx: Any, record: ForgetRecord) -> None:
        """Log a forgotten statement (id, kind, hash, times, reason; never the text)."""
        ...

    def get_forgotten(self, document_id: str) -> ForgetRecord | None:
        """Return the forget-log entry of ``document_id``, or ``None``."""
        ...

    def iter_forgotten(self) -> Iterator[ForgetRecord]:
        """Yield every forget-log entry, oldest first."""
        ...


@runtime_checkable
class CallLogStorage(Protocol):
    """Optional capability of a storage: the opt-in log of MCP tool calls (setting
    ``call_log``), kept in the scope's own store; a storage without it keeps none."""

    def append_calls(self, tx: Any, records: Sequence[CallRecord]) -> None:
        """Append ``records`` in ``tx``, dropping the oldest beyond the storage's bound."""
        ...

    def recent_calls(self, limit: int) -> list[CallRecord]:
        """Return the last ``limit`` records, oldest first."""
        ...
