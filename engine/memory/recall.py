"""Recall across scopes: one answer, one score scale, every hit naming its scope.

Order of work (each scope's filters applied inside each arm, before ranking):

1. embed the query once (outside any transaction; both scopes share the embedder);
2. open one write transaction per scope searched (local first, then global), so the
   read and the ``recalls`` / ``last_recalled_at`` update of the returned rows are one
   transaction;
3. run every retrieval arm in every scope (:mod:`.scoped_search`), merge each arm's runs
   across scopes and fuse (:mod:`.scoped_fusion`);
4. bounded recency bonus (:mod:`.recency`) on the fused score, then the reranker
   (:mod:`octomem.engine.rerank`: a cross-encoder over the top-N, or ``conversation``
   re-ordering conversation turns among their places);
5. dedup across scopes (identical text, then cosine), reported as ``collapsed``;
6. per document: keep each document's best chunk (optional); give each hit its
   relevance (:mod:`octomem.engine.relevance`) and return none, saying why, when none
   of the first :data:`~.judge.JUDGED_HITS` reaches its floor (abstention, the same
   whatever ``top_k``); else cut to ``top_k``, hits that reach their floor kept first
   (:func:`~.judge.judged`);
7. count the recall on the returned documents that answer (relevance at or above the
   floor, :func:`is_answer`); commit.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from ..arms import VersionedStorage
from ..errors import check_question
from ..fusion import order_documents, order_values
from ..pipeline import Pipeline
from ..relevance import Relevance, judged_depth
from ..rerank import more_wanted, rerank_depth, rerank_stage, similarities
from ..turn_neighbours import neighbour_depth, neighbour_turns
from ..types import Chunk, Filters, FusedHit, Hit
from .history_order import current_first
from .judge import JUDGED_HITS, is_document, judged, scope_reach, scope_stats, scope_strength
from .recency import bonus_of
from .scoped_fusion import Key, ScopedFused, fuse_scopes
from .scoped_search import (
    background_runs,
    embedding,
    judging_filters,
    keyword_runs,
    prepare_semantic,
    search_scopes,
    start_embedding,
)
from .scopes import MemoryKnobs

if TYPE_CHECKING:  # imported where used: the MCP server lists tools before numpy loads
    import numpy as np


Per = Literal["chunk", "document"]


@dataclass(frozen=True, slots=True)
class RecallRequest:
    """What to recall.

    :param top_k: hits in the answer, >= 1.
    :param per: ``"chunk"`` (every matching passage) or ``"document"`` (each document's
        best chunk only).
    :param count: record the recall on the returned documents (``recalls``).
    """

    text: str
    top_k: int = 10
    filters: Filters = field(default_factory=Filters)
    per: Per = "chunk"
    count: bool = True


@dataclass(slots=True)
class ScopedHit:
    """One hit of a recall answer.

    :param score: the final score: ``fused_score × (1 + recency)``, higher is better.
    :param recency: the recency bonus as a fraction of the fused score.
    :param relevance: how likely it answers the query, comparable across queries.
    """

    scope: str
    chunk: Chunk
    score: float
    rank: int
    fused_score: float
    recency: float = 0.0
    contributions: dict[str, Hit] = field(default_factory=dict)
    relevance: Relevance | None = None


@dataclass(frozen=True, slots=True)
class ScopedCollapsed:
    """A hit dedup removed: which chunk, into which kept chunk, and why."""

    scope: str
    chunk: Chunk
    kept_scope: str
    kept_chunk: Chunk
    reason: str


@dataclass(slots=True)
class RecallAnswer:
    """A recall across scopes and how it was made (arm names are qualified by scope in
    ``arms_unavailable``: ``"sqlite-vec (global)"``).

    :param abstained: why ``hits`` is empty although something was searched: no hit
        reached ``retrieval.relevance_floor`` (:mod:`octomem.engine.relevance`).
    :param weak_left_out: hits left out because their relevance is below both the floor
        and ``retrieval.relative_floor`` times the best hit's (or, when the best is weak,
        ``retrieval.weak_answer_floor``; :func:`~.judge.tail_floor`).
    :param best_rejected: when ``abstained``, the match with the best relevance, which
        was not returned (``rank`` 1: the best match), so ``explain`` can show why.
    :param scopes_unavailable: scope -> why it was not searched (its store cannot be read).
    :param nothing_to_rank: why ``hits`` is empty although the memory did not abstain:
        nothing stored passes the filters, or nothing is stored (:mod:`.empty`).
    """

    hits: list[ScopedHit]
    scopes: list[str]
    arms_ran: list[str] = field(default_factory=list)
    arms_unavailable: dict[str, str] = field(default_factory=dict)
    semantic_available: bool = False
    collapsed: list[ScopedCollapsed] = field(default_factory=list)
    unembedded_hits: list[Key] = field(default_factory=list)
    chunks_without_vector: int = 0
    timings_ms: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    abstained: str | None = None
    weak_left_out: int = 0
    best_rejected: ScopedHit | None = None
    scopes_unavailable: dict[str, str] = field(default_factory=dict)
    nothing_to_rank: str | None = None


def is_answer(hit: ScopedHit) -> bool:
    """Return whether ``hit`` counts as an answer: its relevance is unknown or reaches its
    kind's floor (``Relevance.passes``; band ``medium`` or ``high``, or ``low`` between the
    floor and :data:`~octomem.engine.relevance.MEDIUM`). Only such hits count as recalled
    (``recalls``); a hit below the floor only rode along with a better one."""
    return hit.relevance is None or hit.relevance.passes


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1e3


def _materialise(
    fused: list[ScopedFused], pipelines: dict[str, Pipeline], knobs: MemoryKnobs, now: float,
    before: list[ScopedHit] | None = None,
) -> list[ScopedHit]:
    """Load the chunks of ``fused`` and apply the recency bonus (re-sorting by it).

    :param before: hits of the fused entries just above ``fused``, already materialised
        (sorted anew with the new ones: the same order as materialising all at once).
    """
    if len(pipelines) == 1:  # one scope: the chunks by id, no key per hit
        (scope, pipeline), = pipelines.items()
        ids = [f.key[1] for f in fused]
        loaded = pipeline.arms.storage.get_chunks(ids)
        if len(loaded) == len(ids):  # every one found, in order (unknown ids are skipped)
            found: Any = zip(fused, loaded, strict=True)
        else:
            by_id = {c.id: c for c in loaded}
            found = [(f, by_id.get(f.key[1])) for f in fused]
    else:
        chunks: dict[Key, Chunk] = {}
        for scope, pipeline in pipelines.items():
            ids = [f.key[1] for f in fused if f.key[0] == scope]
            chunks.update({(scope, c.id): c for c in pipeline.arms.storage.get_chunks(ids)})
        found = [(f, chunks.get(f.key)) for f in fused]
    bonus_of_time = bonus_of(now, knobs.recency_weight, knobs.recency_half_life_days)
    hits = list(before or ())
    for f, chunk in found:
        if chunk is None:  # deleted since the search (another process)
            continue
        bonus = bonus_of_time(chunk.valid_from)
        # the fused entry's contributions are its own (made by fusion, read only since)
        hits.append(ScopedHit(f.key[0], chunk, f.score * (1.0 + bonus), 0, f.score, bonus,
                              f.contributions))
    hits.sort(key=_by_score)
    return hits


def _neighbours(reranker: Any, hits: list[ScopedHit], pipelines: dict[str, Pipeline],
                filters: Filters) -> list[ScopedHit]:
    """Return the turns beside the first fused turns the reranker wants as extra
    candidates (:mod:`~octomem.engine.turn_neighbours`), each read from its scope, ranked
    after ``hits`` with no arm's contribution and a score of 0."""
    depth = neighbour_depth(reranker, hits)
    if not depth:
        return []
    held = {(h.scope, h.chunk.document_id) for h in hits}
    out = []
    for scope, pipeline in pipelines.items():
        mine = [h for h in hits[:depth] if h.scope == scope]
        found = neighbour_turns(pipeline.arms.storage, mine, len(mine), filters,
                                lambda c, s=scope: (s, c.document_id) in held)
        out += [ScopedHit(scope, c, 0.0, 0, 0.0) for c in found]
    return out


def _by_score(hit: ScopedHit) -> tuple[float, float]:
    """Best final score first; exact ties: the newer statement first."""
    return -hit.score, -hit.chunk.valid_from


def _vectors(hits: list[ScopedHit], pipelines: dict[str, Pipeline]) -> np.ndarray | None:
    """Return ``(len(hits), dim)`` rows (zero where a chunk has no vector), or ``None``."""
    import numpy as np

    (scope, pipeline), *others = pipelines.items()
    semantic = pipeline.arms.semantic
    if (not others and hits and semantic is not None and not pipeline.semantic_error
            and all(h.scope == scope for h in hits)):
        # one scope: its arm's rows as they come (the same floats, float32, C order)
        rows = semantic.vectors([h.chunk.id for h in hits])
        if rows.ndim != 2 or rows.shape[1] == 0:
            return None
        return np.ascontiguousarray(rows, dtype=np.float32)
    parts: dict[str, tuple[list[int], np.ndarray]] = {}
    for scope, pipeline in pipelines.items():
        semantic = pipeline.arms.semantic
        at = [i for i, h in enumerate(hits) if h.scope == scope]
        if semantic is not None and not pipeline.semantic_error and at:
            rows = semantic.vectors([hits[i].chunk.id for i in at])
            if rows.ndim == 2 and rows.shape[1] > 0:
                parts[scope] = (at, rows)
    if not parts:
        return None
    dim = next(iter(parts.values()))[1].shape[1]
    out = np.zeros((len(hits), dim), dtype=np.float32)
    for at, rows in parts.values():
        if rows.shape[1] == dim:
            out[at] = rows
    return out


def _dedup(dedup: Any, hits: list[ScopedHit], vectors: np.ndarray | None,
           answer: RecallAnswer) -> list[ScopedHit]:
    """Run the dedup arm across scopes (chunks renumbered by position, then mapped back;
    hits of one scope keep their chunks, whose ids are unique there)."""
    if len({h.scope for h in hits}) == 1:
        proxies = [FusedHit(h.chunk, h.score, i + 1, h.contributions)
                   for i, h in enumerate(hits)]
        at = {h.chunk.id: i for i, h in enumerate(hits)}
    else:
        proxies = [FusedHit(replace(h.chunk, id=i), h.score, i + 1, h.contributions)
                   for i, h in enumerate(hits)]
        at = {i: i for i in range(len(hits))}
    kept, collapsed = dedup.dedup(proxies, vectors)
    for c in collapsed:
        went, into = hits[at[c.chunk_id]], hits[at[c.kept_chunk_id]]
        answer.collapsed.append(ScopedCollapsed(went.scope, went.chunk, into.scope, into.chunk,
                                                c.reason))
    return [hits[at[p.chunk.id]] for p in kept]


def _per_document(hits: list[ScopedHit]) -> list[ScopedHit]:
    seen: set[tuple[str, str]] = set()
    out = []
    for hit in hits:
        key = (hit.scope, hit.chunk.document_id)
        if key not in seen:
            seen.add(key)
            out.append(hit)
    return out


def recall_scopes(
    scoped: Sequence[tuple[str, Pipeline]], request: RecallRequest, knobs: MemoryKnobs,
    now: float | None = None,
) -> RecallAnswer:
    """Answer ``request`` from the given ``(scope, pipeline)`` pairs (search order).

    :param now: the moment recency is measured from (default: ``as_of``, else now).
    :returns: hits best first, each with its scope; what ran, what did not and why.
    :raises InvalidQueryError: empty query text or ``top_k < 1``.
    """
    check_question(request.text, request.top_k)
    total = time.perf_counter()
    answer = RecallAnswer(hits=[], scopes=[s for s, _ in scoped])
    if not scoped:
        return answer
    now = now if now is not None else (request.filters.as_of or time.time())
    pipelines = dict(scoped)
    retrieval = scoped[0][1].settings.retrieval
    first = scoped[0][1].arms
    k = max(retrieval.candidate_k, request.top_k)
    started = start_embedding(scoped, request.text, answer)
    keyword = keyword_runs(scoped, request, k, started)
    if started is not None:
        prepare_semantic(scoped)
    vector = embedding(started, answer)
    with ExitStack() as stack:
        txs = {}
        if request.count:
            for scope, pipeline in scoped:
                if isinstance(pipeline.arms.storage, VersionedStorage):
                    txs[scope] = stack.enter_context(pipeline.arms.storage.transaction())
        runs = search_scopes(scoped, request, vector, k, answer, keyword)
        fused = fuse_scopes(runs, k, retrieval)
        # the same candidates whatever top_k up to JUDGED_HITS: abstaining depends on them
        depth = max(request.top_k, JUDGED_HITS) * (10 if request.per == "document" else 3)
        depth = max(depth, rerank_depth(first.reranker, retrieval.rerank_top_n))
        hits = _materialise(fused[:depth], pipelines, knobs, now)
        extra = more_wanted(first.reranker, hits, depth)
        if extra:  # the first ones are loaded: the stable sort keeps the order of all
            hits = _materialise(fused[depth:depth + extra], pipelines, knobs, now, hits)
        hits = order_documents(hits, fused, retrieval.fusion, retrieval.document_fusion,
                               retrieval.weights)
        hits += _neighbours(first.reranker, hits, pipelines, request.filters)
        vectors = _vectors(hits, pipelines)
        similarity = similarities(vectors, vector)
        # each hit's fused place: the places each kind holds are decided before the reranker
        places = {(h.scope, h.chunk.id): i for i, h in enumerate(hits)}
        if first.reranker is not None and hits:
            hits, vectors, similarity = rerank_stage(
                first.reranker, first.keyword, request.text, hits, vectors, similarity,
                retrieval.rerank_top_n, answer, keep=depth)
        cos = {} if similarity is None else {
            (h.scope, h.chunk.id): c for h, c in zip(hits, similarity.tolist(), strict=True)}
        if vectors is not None:
            answer.unembedded_hits = [
                (h.scope, h.chunk.id) for h, has in zip(hits, vectors.any(axis=1).tolist(),
                                                        strict=True)
                if not has and not pipelines[h.scope].semantic_error
            ]
        if first.dedup is not None and hits:
            hits = _dedup(first.dedup, hits, vectors, answer)
        if request.per == "document":
            hits = _per_document(hits)
        # the runs' statistics score documents' hits only: none among them, none needed;
        # taken over each run's first candidate_k entries, whatever top_k (judged_depth)
        judged_k = judged_depth(retrieval.candidate_k, k)
        # every hit is judged against the memory asked, whatever kinds, tags or window
        # choose the hits shown (scoped_search.judging_filters)
        wide = background_runs(scoped, request.text, vector, request.filters, k, runs) \
            if hits else runs
        stats = (scope_stats(wide, pipelines, judged_k, request.text)
                 if any(is_document(h) for h in hits) else {})
        ties = order_values(hits, fused, retrieval.fusion, retrieval.document_fusion,
                            retrieval.weights)
        hits = judged(hits, request.top_k, request.text, cos, retrieval,
                      getattr(first.embedder, "model_id", None), answer, stats, pipelines,
                      judging_filters(request.filters), ties,
                      scope_reach(wide, pipelines, judged_k),
                      None if all(is_document(h) and stats[h.scope].background for h in hits)
                      else scope_strength(wide, pipelines, judged_k), places)
        if request.filters.include_superseded and request.filters.as_of is None:
            hits = current_first(hits, {s: p.arms.storage for s, p in pipelines.items()})
        for rank, hit in enumerate(hits, start=1):
            hit.rank = rank
        for scope, tx in txs.items():
            ids = [h.chunk.document_id for h in hits if h.scope == scope and is_answer(h)]
            if ids:
                pipelines[scope].arms.storage.record_recalls(tx, ids, time.time())
    kept = {(h.scope, h.chunk.id) for h in hits}
    answer.unembedded_hits = [key for key in answer.unembedded_hits if key in kept]
    answer.hits = hits
    answer.timings_ms["total"] = _ms(total)
    return answer
