"""The write path's batching: runs of new documents stored and keyword-indexed in one
call each (:class:`~octomem.engine.arms.BulkStorage`), the rest one by one.

Documents are taken in order; a document that exists (or repeats an id of the batch)
first writes the run gathered so far, then goes through the pipeline's one-document path
(unchanged, replaced or revised), so chunk ids, the report and the stored rows are those
of writing every document alone, in the same order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .arms import BulkStorage
from .chunking import CountTokens
from .types import Chunk, Document

if TYPE_CHECKING:
    from .pipeline import AddReport, Pipeline


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
