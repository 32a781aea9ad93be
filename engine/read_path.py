"""The read path of one store: every retrieval arm, fusion, rerank, dedup, ``top_k``.

:class:`ReadPath` is the half of :class:`~octomem.engine.pipeline.Pipeline` that answers
a query (:meth:`ReadPath.search`); the write path (chunk, store, index, embed) is the
pipeline's own. The memory domain's read over two scopes
(:mod:`octomem.engine.memory.recall`) has the same stages, merged across scopes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .assembly import Arms
from .chunking import embedding_text
from .concurrency import run_timed, start_timed
from .errors import EmbedderUnavailableError, check_question
from .fusion import (
    Fused,
    order_documents,
    rrf_ranking,
    run_bounds,
    weighted_score_fusion,
)
from .model_load import load_model
from .relevance import JUDGED_HITS, HitJudge, content_words, judged_depth
from .rerank import more_wanted, rerank_depth, rerank_stage, similarities
from .turn_neighbours import neighbour_depth, neighbour_turns
from .types import Answer, Chunk, Filters, FusedHit, Hit, Query, Run, fused_hit

if TYPE_CHECKING:  # imported where used: the MCP server lists tools before numpy loads
    import numpy as np


class ReadPath:
    """Answer queries from one store's arms (a mixin of
    :class:`~octomem.engine.pipeline.Pipeline`, which sets the attributes below).

    :ivar arms: the assembled arms.
    :ivar settings: the settings they were assembled from.
    :ivar semantic_error: why the semantic arm cannot run (stored vectors of another
        embedder), or ``None``.
    """

    arms: Arms
    settings: Any
    semantic_error: str | None

    def _runs(self, query: Query, k: int, depth: int,
              answer: Answer) -> tuple[list[Run], Any, dict[int, Chunk]]:
        """Run the keyword arm (on a worker thread while the semantic half runs, when
        ``retrieval.parallel_arms``) and the semantic arm; keyword run first.

        Side by side, whichever half ends first reads its run's first ``depth`` chunks
        while the other still runs (:meth:`_read_ahead`): the keyword arm's usually end
        inside the query's embedding, which holds no GIL, so the answer's loading then
        reads only the semantic run's chunks.

        :returns: the runs, the query's vector (``None`` when no semantic arm ran) and
            the chunks read ahead by id."""
        keyword, semantic = self.arms.keyword, self.arms.semantic
        if keyword is None:
            return (*self._semantic_runs(query, k, answer), {})
        answer.arms_ran.append(keyword.name)
        if semantic is None or self.semantic_error or not self.settings.retrieval.parallel_arms:
            pending = run_timed(keyword.search, query.text, query.filters, k)
            runs, vector = self._semantic_runs(query, k, answer)
            run, answer.timings_ms[keyword.name] = pending.result()
            return [run, *runs], vector, {}
        semantic_done = threading.Event()
        worker = start_timed(self._keyword_half, query, k, depth, semantic_done)
        try:
            runs, vector = self._semantic_runs(query, k, answer)
        finally:
            semantic_done.set()
        ahead = self._read_ahead(runs[0][:depth]) if runs and not worker.done() else {}
        (run, answer.timings_ms[keyword.name], read), _ = worker.result()
        return [run, *runs], vector, {**read, **ahead}

    def _keyword_half(self, query: Query, k: int, depth: int,
                      other_done: threading.Event) -> tuple[Run, float, dict[int, Chunk]]:
        """Search the keyword arm, then read its run's first ``depth`` chunks ahead unless
        the semantic half is done already.

        :returns: the run, the milliseconds its search took, the chunks read ahead."""
        assert self.arms.keyword is not None
        start = time.perf_counter()
        run = self.arms.keyword.search(query.text, query.filters, k)
        ms = (time.perf_counter() - start) * 1e3
        return run, ms, {} if other_done.is_set() else self._read_ahead(run[:depth])

    def _read_ahead(self, hits: Sequence[Hit]) -> dict[int, Chunk]:
        """Read the chunks of ``hits`` and the content words of the first
        :data:`~.relevance.JUDGED_HITS` ones' texts (:func:`~.relevance.content_words`
        keeps them), as the answer's loading and relevance would, and let the dedup arm
        prepare for them (its optional ``prepare(chunks)``: ``cosine`` normalises their
        texts, ~5 us each).

        :returns: the chunks by id (a chunk deleted meanwhile is missing)."""
        chunks = self.arms.storage.get_chunks([h.chunk_id for h in hits])
        for chunk in chunks[:JUDGED_HITS]:
            content_words(embedding_text(chunk))
        prepare = getattr(self.arms.dedup, "prepare", None)
        if prepare is not None:
            prepare(chunks)
        return {c.id: c for c in chunks}

    def _single_arm(self) -> bool:
        """True when at most one retrieval arm can run (keyword only, or semantic only)."""
        semantic = self.arms.semantic is not None and not self.semantic_error
        return (self.arms.keyword is None) or not semantic

    def _semantic_runs(self, query: Query, k: int, answer: Answer) -> tuple[list[Run], Any]:
        semantic = self.arms.semantic
        if semantic is None:
            return [], None
        if self.semantic_error:
            answer.arms_unavailable[semantic.name] = self.semantic_error
            return [], None
        try:
            loading = load_model(self.arms.embedder)
            start = time.perf_counter()
            vector = self.arms.embedder.embed_query(query.text)
        except EmbedderUnavailableError as exc:
            answer.arms_unavailable[semantic.name] = str(exc)
            return [], None
        if loading:
            answer.timings_ms["load_model"] = loading
        answer.timings_ms["embed_query"] = (time.perf_counter() - start) * 1e3
        start = time.perf_counter()
        run = semantic.search(vector, query.filters, k)
        answer.timings_ms[semantic.name] = (time.perf_counter() - start) * 1e3
        answer.arms_ran.append(semantic.name)
        return [run], vector

    def _fuse(self, runs: list[Run]) -> Sequence[Fused]:
        retrieval = self.settings.retrieval
        if retrieval.fusion == "weighted":
            return weighted_score_fusion(runs, retrieval.weights)
        return rrf_ranking(runs, retrieval.rrf_k, retrieval.weights)

    def search(self, query: Query) -> Answer:
        """Answer a query: every retrieval arm (filters inside each), fusion, optional
        rerank of the fused top-N, dedup, then ``top_k``.

        :returns: an :class:`Answer` whose hits are best first, with each arm's rank and
            raw score in ``contributions`` and what did not run in ``arms_unavailable``.
        :raises InvalidQueryError: empty query text or ``top_k < 1``.
        """
        check_question(query.text, query.top_k)
        total = time.perf_counter()
        answer = Answer(hits=[], arms_ran=[], arms_unavailable={}, semantic_available=False)
        retrieval, reranker = self.settings.retrieval, self.arms.reranker
        depth = max(query.top_k * 3, rerank_depth(reranker, retrieval.rerank_top_n))
        k = max(self.settings.retrieval.candidate_k, query.top_k)
        if self._single_arm() and self.settings.retrieval.fusion == "rrf":
            k = min(k, depth)  # RRF of one run keeps its order: hits past depth go unused
        runs, query_vector, ahead = self._runs(query, k, depth, answer)
        fused = self._fuse(runs)
        answer = replace(answer, semantic_available=self.arms.semantic is not None
                         and self.arms.semantic.name in answer.arms_ran,
                         chunks_without_vector=self._without_vector())
        hits = self._load(fused[:depth], 0, ahead)
        extra = more_wanted(reranker, hits, depth)
        if extra:
            hits += self._load(fused[depth:depth + extra], len(hits), ahead)
        hits = order_documents(hits, fused, retrieval.fusion, retrieval.document_fusion,
                               retrieval.weights, run_bounds(runs))
        hits += self._neighbours(hits, query.filters)
        vectors = self._vectors(hits)
        similarity = similarities(vectors, query_vector)
        if reranker is not None and hits:
            hits, vectors, similarity = rerank_stage(
                reranker, self.arms.keyword, query.text, hits, vectors, similarity,
                retrieval.rerank_top_n, answer, keep=depth)
        cos = {} if similarity is None else {
            h.chunk.id: float(c) for h, c in zip(hits, similarity, strict=True)}
        if vectors is not None:
            embedded = vectors.any(axis=1).tolist()  # one call, not one per hit
            answer.unembedded_hits.extend(
                h.chunk.id for h, v in zip(hits, embedded, strict=True) if not v
            )
        if self.arms.dedup is not None and hits:
            hits, collapsed = self.arms.dedup.dedup(hits, vectors)
            answer.collapsed.extend(collapsed)
        judge = HitJudge(self.settings.retrieval, self.arms, runs, query.filters,
                         [embedding_text(h.chunk) for h in hits[:JUDGED_HITS]],
                         judged_depth(retrieval.candidate_k, k), query.text)
        hits = [fused_hit(h.chunk, h.score, i, h.contributions, judge(
            query.text, h, embedding_text(h.chunk), cos.get(h.chunk.id)))
                for i, h in enumerate(hits[: query.top_k], start=1)]
        kept = {h.chunk.id for h in hits}
        answer.unembedded_hits[:] = [i for i in answer.unembedded_hits if i in kept]
        answer.timings_ms["total"] = (time.perf_counter() - total) * 1e3
        return replace(answer, hits=hits)

    def _load(self, fused: Sequence[Fused], before: int = 0,
              ahead: dict[int, Chunk] | None = None) -> list[FusedHit]:
        """Load the chunks of ``fused`` as hits ranked from ``before + 1`` (a chunk deleted
        meanwhile is skipped); those in ``ahead`` (read during the search) are not read
        again."""
        ahead = ahead or {}
        chunks = {c.id: c for c in self.arms.storage.get_chunks(
            [f.chunk_id for f in fused if f.chunk_id not in ahead])}
        chunks.update((f.chunk_id, ahead[f.chunk_id]) for f in fused if f.chunk_id in ahead)
        return [
            fused_hit(chunks[f.chunk_id], f.score, rank, dict(f.contributions))
            for rank, f in enumerate((f for f in fused if f.chunk_id in chunks), before + 1)
        ]

    def _neighbours(self, hits: list[FusedHit], filters: Filters) -> list[FusedHit]:
        """Return the turns beside the first fused turns the reranker wants as extra
        candidates (:mod:`~.turn_neighbours`), ranked after ``hits``, with no arm's
        contribution and a fused score of 0."""
        depth = neighbour_depth(self.arms.reranker, hits)
        if not depth:
            return []
        held = {h.chunk.document_id for h in hits}
        found = neighbour_turns(self.arms.storage, hits, depth, filters,
                                lambda c: c.document_id in held)
        return [fused_hit(c, 0.0, rank, {}) for rank, c in enumerate(found, len(hits) + 1)]

    def _without_vector(self) -> int:
        """Return how many chunks the semantic arm cannot see (no vector of this embedder)."""
        if self.arms.semantic is None or self.semantic_error:
            return 0
        return int(self.arms.semantic.missing_count())

    def _vectors(self, hits: Sequence[FusedHit]) -> np.ndarray | None:
        if self.arms.semantic is None or self.semantic_error or not hits:
            return None
        return self.arms.semantic.vectors([h.chunk.id for h in hits])
