"""The write path's batching: runs of new documents stored and keyword-indexed in one
call each (:class:`~octomem.engine.arms.BulkStorage`), the rest one by one.

Documents are taken in order; a document that exists (or repeats an id of the batch)
first writes the run gathered so far, then goes through the pipeline's one-document path
(unchanged, replaced or revised), so chunk ids, the report and the stored rows are those
of writing every document alone, in the same order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .arms import BulkStorage
from .chunking import CountTokens
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


def write_batch(
    pipeline: Pipeline, tx: Any, batch: Sequence[Document], report: AddReport,
    count: CountTokens,
) -> None:
    """Write ``batch`` inside ``tx``: new documents in runs, others one at a time.

    :raises OctomemError: a document cannot be stored (the caller's transaction rolls
        back: nothing of the batch is kept).
    """
    storage = pipeline.arms.storage
    if not isinstance(storage, BulkStorage):
        for doc in batch:
            pipeline._write(tx, doc, report, count)
        return
    present = storage.existing_ids([d.id for d in batch])
    run: list[tuple[Document, list[Chunk]]] = []
    seen: set[str] = set()
    for doc in batch:
        if doc.id in present or doc.id in seen:
            _store_run(pipeline, storage, tx, run, report)
            pipeline._write(tx, doc, report, count)
        else:
            run.append((doc, pipeline._chunk(doc, count)))
        seen.add(doc.id)
    _store_run(pipeline, storage, tx, run, report)


def _store_run(
    pipeline: Pipeline, storage: BulkStorage, tx: Any,
    run: list[tuple[Document, list[Chunk]]], report: AddReport,
) -> None:
    """Store and keyword-index a run of new documents, then empty ``run``."""
    if not run:
        return
    stored = [c for chunks in storage.add_documents(tx, run) for c in chunks]
    if pipeline.arms.keyword is not None and stored:
        pipeline.arms.keyword.index(tx, stored)
    report.added.extend(doc.id for doc, _ in run)
    report.chunks += len(stored)
    report.chunk_ids.extend(c.id for c in stored)
    run.clear()
