"""Every retrieval arm in every scope, the query embedded once: the runs a recall fuses.

Stage 3 of :mod:`.recall`: the query's embedding starts first, the keyword arms search
meanwhile when ``retrieval.parallel_arms`` (the bundled model's ONNX run here and the
keyword arms on workers; another embedder on a worker and the keyword arms here), each
semantic arm gets ready meanwhile, then every arm searches every scope with the filters
inside its own search; the runs are gathered per arm and scope
(:class:`~.scoped_fusion.ScopedRuns`), with what ran, what could not and why, and each
search's time, on the answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..concurrency import run_timed, start_timed
from ..errors import EmbedderUnavailableError
from ..model_load import load_model
from ..pipeline import Pipeline, embedding_text
from ..relevance import coverage, query_words
from ..types import Filters, Run
from .scoped_fusion import Lexical, ScopedRuns

if TYPE_CHECKING:
    from .recall import RecallAnswer, RecallRequest


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1e3


@dataclass(slots=True)
class Started:
    """A recall's query embedding under way (:func:`start_embedding`).

    :param usable: the ``(scope, semantic arm)`` pairs that wait for the vector.
    :param future: the vector (or the embedder's error) and the milliseconds it took,
        computed on a worker or already here; ``None`` when ``job`` is to run here.
    :param job: the embedder's :meth:`query_job` call, the query tokenized already: run
        on this thread by :func:`embedding`, while the keyword arms search on workers.
    :param ms: the milliseconds spent before ``job`` (the model's load apart).
    :param loading: the milliseconds the model's load took.
    """

    usable: list[tuple[str, Any]]
    future: Future[tuple[Any, float]] | None = None
    job: Callable[[], Any] | None = None
    ms: float = 0.0
    loading: float = 0.0

    @property
    def here(self) -> bool:
        """True when the embedding runs on this thread (the keyword arms on workers)."""
        return self.job is not None


def start_embedding(
    scoped: Sequence[tuple[str, Pipeline]], text: str, answer: RecallAnswer,
) -> Started | None:
    """Start embedding the query once with the shared embedder (``None`` when no scope
    can use it). With ``retrieval.parallel_arms`` and a keyword arm to run meanwhile: an
    embedder with a ``query_job(text)`` (the bundled MiniLM) tokenizes here and leaves
    its ONNX run, which holds no GIL, to :func:`embedding` on this thread, the keyword
    arms searching on workers (:func:`keyword_runs`), so neither half waits for the GIL
    before its work starts; another embedder, or a model not loaded yet (a one-shot
    process's first query: the load overlaps the keyword arms), runs on a worker while
    the keyword arms search here. Else it embeds right here.
    """
    usable: list[tuple[str, Any]] = []
    for scope, pipeline in scoped:
        semantic = pipeline.arms.semantic
        if semantic is None:
            continue
        if pipeline.semantic_error:
            answer.arms_unavailable[f"{semantic.name} ({scope})"] = pipeline.semantic_error
        else:
            usable.append((scope, semantic))
    embedder = scoped[0][1].arms.embedder if scoped else None
    if not usable or embedder is None:
        return None
    keyword = any(p.arms.keyword is not None for _, p in scoped)
    parallel = keyword and scoped[0][1].settings.retrieval.parallel_arms
    prepare = getattr(embedder, "query_job", None)
    # a model still to load loads on the worker, the keyword arm searching meanwhile
    if parallel and callable(prepare) and getattr(embedder, "loaded", True):
        try:
            loading = load_model(embedder)
            start = time.perf_counter()
            job = prepare(text)
        except EmbedderUnavailableError as exc:  # reported by embedding(), as a worker's
            return Started(usable, run_timed(_failed, exc))
        if job is not None:
            return Started(usable, None, job, _ms(start), loading)
    return Started(usable, (start_timed if parallel else run_timed)(_embedded, embedder, text))


def _failed(exc: EmbedderUnavailableError) -> tuple[Any, float]:
    return exc, 0.0


def _embedded(embedder: Any, text: str) -> tuple[Any, float]:
    """Return ``embedder``'s vector of ``text`` (or the :class:`EmbedderUnavailableError`
    it raised, reported by :func:`embedding`) and the milliseconds spent loading its
    model first (:func:`~octomem.engine.model_load.load_model`)."""
    try:
        loading = load_model(embedder)
        return embedder.embed_query(text), loading
    except EmbedderUnavailableError as exc:
        return exc, 0.0


def embedding(started: Started | None, answer: RecallAnswer) -> Any:
    """Wait for :func:`start_embedding`'s vector (or run its job here); ``None`` when
    there is none (the embedder's error then names each semantic arm it left out)."""
    if started is None:
        return None
    if started.job is not None:
        start, loading = time.perf_counter(), started.loading
        try:
            vector = started.job()
        except EmbedderUnavailableError as exc:  # e.g. vectors of another dimension
            vector = exc
        ms = started.ms + _ms(start) + loading
    else:
        assert started.future is not None
        (vector, loading), ms = started.future.result()
    if isinstance(vector, EmbedderUnavailableError):
        for scope, semantic in started.usable:
            answer.arms_unavailable[f"{semantic.name} ({scope})"] = str(vector)
        return None
    if loading:
        answer.timings_ms["load_model"] = loading
    answer.timings_ms["embed_query"] = ms - loading
    return vector


def keyword_runs(
    scoped: Sequence[tuple[str, Pipeline]], request: RecallRequest, k: int,
    started: Started | None = None,
) -> dict[str, Future[tuple[Run, float]]]:
    """Start each scope's keyword search: on a worker when the query's embedding runs on
    this thread (``started.here``), else here (the embedding, if any, runs meanwhile on a
    worker: :func:`start_embedding`)."""
    start = start_timed if started is not None and started.here else run_timed
    return {
        scope: start(pipeline.arms.keyword.search, request.text, request.filters, k)
        for scope, pipeline in scoped if pipeline.arms.keyword is not None
    }


def prepare_semantic(scoped: Sequence[tuple[str, Pipeline]]) -> None:
    """While the query is embedded on a worker, let each semantic arm that can get ready
    for its search (an optional ``prepare()``: sqlite-vec restores its in-RAM copy from
    snapshots), instead of after the embedding."""
    for _, pipeline in scoped:
        prepare = getattr(pipeline.arms.semantic, "prepare", None)
        if callable(prepare) and not pipeline.semantic_error:
            prepare()


def search_scopes(
    scoped: Sequence[tuple[str, Pipeline]], request: RecallRequest, vector: Any, k: int,
    answer: RecallAnswer, pending: dict[str, Future[tuple[Run, float]]],
) -> ScopedRuns:
    """Gather each scope's keyword run (``pending``: :func:`keyword_runs`) and run each
    scope's semantic arm with ``vector``; record what ran, each search's milliseconds
    and the chunks without a vector on ``answer``.

    :param vector: the query's float32 ``(dim,)`` unit vector, or ``None`` (no semantic run).
    :param k: candidates per arm and scope.
    :returns: the runs by arm and scope, semantic runs comparable by score across scopes.
    """
    comparable = frozenset(p.arms.semantic.name for _, p in scoped if p.arms.semantic is not None)
    runs = ScopedRuns(by_score=comparable,
                      lexical=_lexical(scoped, request.text) if len(scoped) > 1 else None)
    for order, (scope, pipeline) in enumerate(scoped):
        keyword, semantic = pipeline.arms.keyword, pipeline.arms.semantic
        if keyword is not None:
            run, answer.timings_ms[f"{keyword.name} ({scope})"] = pending[scope].result()
            runs.add(scope, order, run)
            answer.arms_ran.append(keyword.name)
        if semantic is not None and vector is not None and not pipeline.semantic_error:
            start = time.perf_counter()
            runs.add(scope, order, semantic.search(vector, request.filters, k))
            answer.timings_ms[f"{semantic.name} ({scope})"] = _ms(start)
            answer.arms_ran.append(semantic.name)
            answer.semantic_available = True
            count = getattr(semantic, "missing_count", None)
            missing = count() if callable(count) else len(semantic.missing())
            answer.chunks_without_vector += int(missing)
    answer.arms_ran[:] = list(dict.fromkeys(answer.arms_ran))
    return runs


def _lexical(scoped: Sequence[tuple[str, Pipeline]], text: str) -> Lexical:
    """Return the coverage of ``text``'s content words in chunks of any scope (what
    decides between scopes' keyword hits, see :mod:`.scoped_fusion`)."""
    words, pipelines = query_words(text), dict(scoped)

    def lexical(scope: str, ids: Sequence[int]) -> list[float]:
        chunks = {c.id: c for c in pipelines[scope].arms.storage.get_chunks(list(ids))}
        return [coverage(words, embedding_text(chunks[i])) if i in chunks else 0.0 for i in ids]

    return lexical


def narrows(filters: Filters) -> bool:
    """Return whether ``filters`` choose which of the asked memory's hits are shown: kinds,
    tags, or a ``created`` / ``valid`` window. ``metadata`` chooses the memory asked (one
    conversation, one source: the benchmarks' ``--group-by``), and ``as_of`` and
    ``include_superseded`` its instant; neither is a part of it."""
    return bool(filters.kinds or filters.tags) or any(
        bound is not None for bound in (filters.created_after, filters.created_before,
                                        filters.valid_after, filters.valid_before))


def judging_filters(filters: Filters) -> Filters:
    """Return the filters a hit's relevance is judged under: ``filters`` without what
    :func:`narrows` (``metadata``, ``as_of`` and ``include_superseded`` kept), so that
    kinds, tags and time windows decide which hits an answer shows, never how relevant one
    is (README; trial 21: ``--since`` or ``--tag`` moved a statement from 0.37 to 0.26, and
    a chat turn shown unfiltered abstained under a window holding it)."""
    return Filters(metadata=filters.metadata, as_of=filters.as_of,
                   include_superseded=filters.include_superseded)


def background_runs(
    scoped: Sequence[tuple[str, Pipeline]], text: str, vector: Any, filters: Filters, k: int,
    runs: ScopedRuns,
) -> ScopedRuns:
    """Return the runs every hit is judged against (:func:`.judge.scope_stats`,
    :func:`.judge.scope_reach`, :func:`.judge.scope_strength`): the query's runs over the
    memory asked, under :func:`judging_filters`. ``runs`` (this recall's own) when
    ``filters`` do not :func:`narrows`; else each scope's keyword and semantic arms asked
    again.

    Trial 20 L7: 182 of 2,852 documents say "the night train to vienna ..."; asked
    "night train to vienna sleeper" with ``kinds: DOC`` the answer abstained (0.054: the
    documents' runs under that filter were full, and no hit stood out of them), with
    ``kinds: DOC, tags: 日本`` it answered 0.72 ``high`` (the narrower filter's runs held
    fewer than ``candidate_k`` chunks: no background, so the turn weights).

    :param vector: the query's unit vector (``None``: no semantic run, as in ``runs``).
    :param k: candidates per arm and scope (as ``runs`` were asked).
    """
    if not narrows(filters):
        return runs
    wide = judging_filters(filters)
    out = ScopedRuns(by_score=runs.by_score)
    for order, (scope, pipeline) in enumerate(scoped):
        keyword, semantic = pipeline.arms.keyword, pipeline.arms.semantic
        if keyword is not None:
            out.add(scope, order, keyword.search(text, wide, k))
        if semantic is not None and vector is not None and not pipeline.semantic_error:
            out.add(scope, order, semantic.search(vector, wide, k))
    return out
