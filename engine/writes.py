"""The write path's batching: runs of new documents stored and keyword-indexed in one
call each (:class:`~octomem.engine.arms.BulkStorage`), the rest one by one.

Documents are taken in order; a document that exists (or repeats an id of the batch)
first writes the run gathered so far, then goes through the pipeline's one-document path
(unchanged, replaced or revised), so chunk ids, the report and the stored rows are those
of writing every document alone, in the same order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .arms import BulkStorage, PreparedBulkStorage, StoredKeywordIndex, TextBulkStorage
from .chunking import CountTokens
from .controls import blank
from .errors import InvalidQueryError
from .types import Chunk, Document

if TYPE_CHECKING:
    from .pipeline import AddReport, Pipeline


#: Most documents written per storage transaction during ingest. Each commit cost ~10 ms
#: (WAL pages, FTS5 segment merges): at 64 the commits were 1.6 of 2.7 s of the SQL in
#: the 10k ingest benchmark (``benchmarks/results/peers/harness.py ingest``, load ~4),
#: 0.4 s at 1,000 and 0.2 s at 10,000 in one. 1,024 keeps a transaction well under a
#: second, so a concurrent writer (a recall's counters) waits far less than the busy
#: timeout.
DOCS_PER_TRANSACTION = 1024
#: Most characters of text (and titles) written per storage transaction during ingest, so
#: that a batch of long documents does not hold the write lock (or RAM) for long; a
#: document longer than this is written alone.
TEXT_PER_TRANSACTION = 4_000_000


def transactions(documents: Iterable[Document], size: int | None) -> Iterator[list[Document]]:
    """Yield ``documents`` in batches of ``size``; by default (``None``) of at most
    :data:`DOCS_PER_TRANSACTION` documents and :data:`TEXT_PER_TRANSACTION` characters."""
    if size is not None:
        yield from batches(documents, max(1, size))
        return
    batch: list[Document] = []
    chars = 0
    for doc in documents:
        n = len(doc.text) + len(doc.title or "") if isinstance(doc.text, str) else 0
        if batch and (len(batch) == DOCS_PER_TRANSACTION or chars + n > TEXT_PER_TRANSACTION):
            yield batch
            batch, chars = [], 0
        batch.append(doc)
        chars += n
    if batch:
        yield batch


def batches(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    """Yield ``items`` in lists of ``size`` (the last one shorter)."""
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


#: Chunks in the first batch :meth:`~octomem.engine.pipeline.Pipeline.embed_pending`
#: embeds; each next batch doubles, up to ``retrieval.embed_batch_size``. Not a quality
#: knob: a progress bar advances once per batch, and at 64 chunks a batch took 40-80 s at
#: load 7-9 on 2 cores (the seventh user trial saw ``0/1,054`` for 80 s), so the first
#: steps come after a few seconds; the few extra commits cost nothing measurable.
FIRST_EMBED_BATCH = 8


def ramped(items: Sequence[Any], size: int, first: int = FIRST_EMBED_BATCH) -> Iterator[list[Any]]:
    """Yield ``items`` in lists of ``first``, twice that, and so on up to ``size`` items
    (every later list ``size``; the last one shorter), order kept."""
    start, step = 0, max(1, min(first, size))
    while start < len(items):
        yield list(items[start:start + step])
        start += step
        step = min(step * 2, size)


@dataclass
class Prepared:
    """A batch ready to write: its token counter and each document's chunks.

    :param batch: the documents, in order.
    :param count: the batch's token counter (:meth:`Pipeline._counted`).
    :param chunks: per document of ``batch``, its chunks (ids not set yet), or ``None``
        when only ``texts`` were made (:func:`write_batch` makes them if it needs them).
    :param rows: the storage's rows of the whole batch as new documents
        (:meth:`~octomem.engine.arms.PreparedBulkStorage.bulk_rows`, or
        :meth:`~octomem.engine.arms.TextBulkStorage.bulk_text_rows` when ``texts`` is
        set), or ``None`` (not such a storage, an id repeated in the batch, or values it
        refused).
    :param texts: per document of ``batch``, its chunks' texts, when ``rows`` were built
        from them; else ``None``.
    """

    batch: list[Document]
    count: CountTokens
    chunks: list[list[Chunk]] | None
    rows: Any = None
    texts: list[list[str]] | None = None


def prepare(pipeline: Pipeline, batch: list[Document]) -> Prepared:
    """Check, count and chunk ``batch``, and build its storage rows when the storage can
    (Python only: no storage call, no transaction). A
    :class:`~octomem.engine.arms.TextBulkStorage` gets the chunks' texts only (no
    :class:`Chunk` made here: the storage makes the stored ones).

    :raises InvalidQueryError: a document has empty text.
    """
    for doc in batch:
        if not isinstance(doc.text, str) or blank(doc.text):
            raise InvalidQueryError(f"document {doc.id!r}: text is empty")
    count = pipeline._counted(batch)
    storage = pipeline.arms.storage
    ahead = pipeline.rows_ahead and isinstance(storage, PreparedBulkStorage) and \
        len({doc.id for doc in batch}) == len(batch)
    if ahead and isinstance(storage, TextBulkStorage):
        texts = [pipeline._chunk_texts(doc, count) for doc in batch]
        try:
            return Prepared(batch, count, None, storage.bulk_text_rows(batch, texts), texts)
        except Exception:  # noqa: BLE001 - written by add_documents, which raises it in the transaction
            return Prepared(batch, count, None, None, texts)
    chunks = [pipeline._chunk(doc, count) for doc in batch]
    rows = None
    if ahead:
        try:
            rows = storage.bulk_rows(list(zip(batch, chunks, strict=True)))
        except Exception:  # noqa: BLE001 - written by add_documents, which raises it in the transaction
            rows = None
    return Prepared(batch, count, chunks, rows)


def prepared(pipeline: Pipeline, batches: Iterable[list[Document]]) -> Iterator[Prepared]:
    """Yield each of ``batches`` prepared (:func:`prepare`), in order, preparing the next
    one in a worker thread while the caller writes this one.

    The Python of counting and chunking then runs while SQLite, which releases the GIL
    while it works, writes the batch before (10k documents of
    ``benchmarks/results/peers/harness.py ingest``, load 14-15: see
    ``benchmarks/results/ingest/2026-12-02-round6``). The storage is only ever called from
    the caller's thread. A batch's error is raised where writing it would begin, after
    the batches before it are written, as without the thread. The embedder's token
    counter is called from the worker thread, and so is the storage's
    :meth:`~octomem.engine.arms.PreparedBulkStorage.bulk_rows` (:func:`prepare`), so that
    the caller's thread runs little more than SQL. Meanwhile the process's GIL switch
    interval is lowered (:func:`~.switching.quick_switches`), so that the caller gets the
    GIL back soon after each statement instead of 5 ms later.
    """
    batches = iter(batches)
    batch = next(batches, None)
    if batch is None:
        return
    current = prepare(pipeline, batch)
    batch = next(batches, None)
    if batch is None:  # one batch (a remember, a small ingest): no thread
        yield current
        return
    from concurrent.futures import ThreadPoolExecutor

    from .switching import quick_switches

    with quick_switches(), \
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="octomem-prepare") as pool:
        while batch is not None:
            ahead = pool.submit(prepare, pipeline, batch)
            yield current
            batch = next(batches, None)
            current = ahead.result()
    yield current


def write_batch(
    pipeline: Pipeline, tx: Any, batch: Sequence[Document], report: AddReport,
    count: CountTokens, chunks: Sequence[list[Chunk]] | None = None, rows: Any = None,
    texts: Sequence[Sequence[str]] | None = None,
) -> None:
    """Write ``batch`` inside ``tx``: new documents in runs, others one at a time.

    :param chunks: per document, its chunks as :meth:`Pipeline._chunk` makes them with
        ``count`` (made here when not given: from ``texts`` when given).
    :param rows: :attr:`Prepared.rows` of ``batch`` and ``chunks`` (or ``texts``):
        written as they are when no document of the batch is stored yet.
    :param texts: :attr:`Prepared.texts`, per document its chunks' texts.
    :raises OctomemError: a document cannot be stored (the caller's transaction rolls
        back: nothing of the batch is kept).
    """
    storage = pipeline.arms.storage
    if not isinstance(storage, BulkStorage):
        for doc in batch:
            pipeline._write(tx, doc, report, count)
        return
    present = storage.existing_ids([d.id for d in batch])
    pipeline.rows_ahead = not present  # a re-ingest: the next batches' rows would be wasted
    if rows is not None and not present:
        if texts is not None and isinstance(storage, TextBulkStorage):
            _index_ids(pipeline, tx, storage.add_text_rows(tx, rows), batch, report)
            return
        if chunks is not None and isinstance(storage, PreparedBulkStorage):
            pairs = list(zip(batch, chunks, strict=True))
            _index_stored(pipeline, tx, storage.add_rows(tx, pairs, rows), batch, report)
            return
    if chunks is None and texts is not None:
        chunks = [pipeline._chunks_of(doc, own) for doc, own in zip(batch, texts, strict=True)]
    run: list[tuple[Document, list[Chunk]]] = []
    seen: set[str] = set()
    for i, doc in enumerate(batch):
        if doc.id in present or doc.id in seen:
            _store_run(pipeline, storage, tx, run, report)
            pipeline._write(tx, doc, report, count)
        else:
            run.append((doc, chunks[i] if chunks is not None else pipeline._chunk(doc, count)))
        seen.add(doc.id)
    _store_run(pipeline, storage, tx, run, report)


def _store_run(
    pipeline: Pipeline, storage: BulkStorage, tx: Any,
    run: list[tuple[Document, list[Chunk]]], report: AddReport,
) -> None:
    """Store and keyword-index a run of new documents, then empty ``run``."""
    if not run:
        return
    _index_stored(pipeline, tx, storage.add_documents(tx, run), [doc for doc, _ in run],
                  report)
    run.clear()


def _index_stored(
    pipeline: Pipeline, tx: Any, stored_chunks: list[list[Chunk]],
    documents: Sequence[Document], report: AddReport,
) -> None:
    """Keyword-index the chunks just stored for the new ``documents`` and report them."""
    stored = [c for chunks in stored_chunks for c in chunks]
    if pipeline.arms.keyword is not None and stored:
        pipeline.arms.keyword.index(tx, stored)
    report.added.extend(doc.id for doc in documents)
    report.chunks += len(stored)
    report.chunk_ids.extend(c.id for c in stored)


def _index_ids(
    pipeline: Pipeline, tx: Any, chunk_ids: list[int], documents: Sequence[Document],
    report: AddReport,
) -> None:
    """Keyword-index the chunks ``chunk_ids`` just stored for the new ``documents`` (by
    their ids when the arm can, :class:`~.arms.StoredKeywordIndex`; else the chunks read
    back inside ``tx``) and report them."""
    keyword = pipeline.arms.keyword
    if keyword is not None and chunk_ids and not (
            isinstance(keyword, StoredKeywordIndex) and keyword.index_stored(tx, chunk_ids)):
        keyword.index(tx, pipeline.arms.storage.get_chunks(chunk_ids))
    report.added.extend(doc.id for doc in documents)
    report.chunks += len(chunk_ids)
    report.chunk_ids.extend(chunk_ids)
