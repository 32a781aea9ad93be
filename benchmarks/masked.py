"""Hide some documents from a pipeline's arms for a while, without touching the store.

The abstention pass of ``octomem bench --abstention`` on a document dataset (no
``--group-by``) asks each query of the store *without its relevant documents*. Storing
the corpus again per query would cost an ingest per query; instead each retrieval arm
is wrapped so that its run leaves out the hidden chunks *before fusion*: the arm is
asked for ``k`` plus the number of hidden chunks, the hidden ones are dropped and the
rest keep their order, renumbered from rank 1, cut at ``k``. An arm ranks each chunk by
that chunk's own score (BM25 over the query terms, cosine), so this is the run the arm
would return from a store that never held them, except for corpus statistics (BM25's
document frequencies and average length still count the hidden chunks: a few chunks of
thousands). Fusion, the reranker, dedup, relevance and the floor then run unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from octomem.engine.pipeline import Pipeline
from octomem.engine.types import Run


class MaskedArm:
    """A keyword or semantic arm whose runs leave out the chunks in ``hidden``.

    Every attribute but :meth:`search` is the wrapped arm's own.

    :param arm: the arm to wrap (anything with ``search(query, filters, k) -> Run``).
    :param hidden: chunk ids the runs leave out.
    """

    def __init__(self, arm: Any, hidden: frozenset[int]) -> None:
        self._arm = arm
        self._hidden = hidden

    def search(self, query: Any, filters: Any, k: int) -> Run:
        """Return the wrapped arm's run for ``k + len(hidden)`` without the hidden chunks,
        re-ranked from 1 and cut at ``k`` (same hit scores)."""
        if not self._hidden:
            return self._arm.search(query, filters, k)
        run = self._arm.search(query, filters, k + len(self._hidden))
        kept = [h for h in run if h.chunk_id not in self._hidden][:k]
        return [replace(h, rank=rank) for rank, h in enumerate(kept, start=1)]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._arm, name)


@contextmanager
def hidden_chunks(pipeline: Pipeline, chunk_ids: frozenset[int]) -> Iterator[Pipeline]:
    """Within the block, ``pipeline``'s keyword and semantic arms leave out ``chunk_ids``
    (:class:`MaskedArm`); the arms are put back on exit, whatever happens."""
    arms = pipeline.arms
    keyword = MaskedArm(arms.keyword, chunk_ids) if arms.keyword is not None else None
    semantic = MaskedArm(arms.semantic, chunk_ids) if arms.semantic is not None else None
    pipeline.arms = replace(arms, keyword=keyword, semantic=semantic)
    try:
        yield pipeline
    finally:
        pipeline.arms = arms


def chunks_by_document(pipeline: Pipeline) -> dict[str, list[int]]:
    """Return each stored document's current chunk ids."""
    out: dict[str, list[int]] = {}
    for chunk in pipeline.arms.storage.iter_chunks():
        out.setdefault(chunk.document_id, []).append(chunk.id)
    return out
