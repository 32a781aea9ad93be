"""Every retrieval arm in every scope, the query embedded once: the runs a recall fuses.

Stage 3 of :mod:`.recall`: the query's embedding starts first (on a worker thread while
the keyword arms run here, when ``retrieval.parallel_arms``), each semantic arm gets
ready meanwhile, then every arm searches every scope with the filters inside its own
search; the runs are gathered per arm and scope (:class:`~.scoped_fusion.ScopedRuns`),
with what ran, what could not and why, and each search's time, on the answer.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from ..concurrency import run_timed, start_timed
from ..errors import EmbedderUnavailableError
from ..model_load import load_model
from ..pipeline import Pipeline, embedding_text
from ..relevance import content_words, coverage
from ..types import Run
from .scoped_fusion import Lexical, ScopedRuns

if TYPE_CHECKING:
    from .recall import RecallAnswer, RecallRequest


def _ms(start: float) -> float:
    return (time.perf_counter() - start) * 1e3


def start_embedding(
    scoped: Sequence[tuple[str, Pipeline]], text: str, answer: RecallAnswer,
) -> tuple[Future[tuple[Any, float]], list[tuple[str, Any]]] | None:
    """Start embedding the query once with the shared embedder (``None`` when no scope
    can use it): on a worker thread when ``retrieval.parallel_arms`` and a keyword arm
    will run meanwhile on this one (onnxruntime leaves the GIL while the keyword arm's
    Python runs here), else right here.

    :returns: the future of ``((vector or the embedder's error), milliseconds)`` and the
        ``(scope, semantic arm)`` pairs that wait for it.
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
    return (start_timed if parallel else run_timed)(_embedded, embedder, text), usable


def _embedded(embedder: Any, text: str) -> tuple[Any, float]:
    """Return ``embedder``'s vector of ``text`` (or the :class:`EmbedderUnavailableError`
    it raised, reported by :func:`embedding`) and the milliseconds spent loading its
    model first (:func:`~octomem.engine.model_load.load_model`)."""
    try:
        loading = load_model(embedder)
        return embedder.embed_query(text), loading
    except EmbedderUnavailableError as exc:
        return exc, 0.0


def embedding(started: tuple[Future[tuple[Any, float]], list[tuple[str, Any]]] | None,
               answer: RecallAnswer) -> Any:
    """Wait for :func:`start_embedding`'s vector; ``None`` when there is none (the
    embedder's error then names each semantic arm it left out)."""
    if started is None:
        return None
    future, usable = started
    (vector, loading), ms = future.result()
    if isinstance(vector, EmbedderUnavailableError):
        for scope, semantic in usable:
            answer.arms_unavailable[f"{semantic.name} ({scope})"] = str(vector)
        return None
    if loading:
        answer.timings_ms["load_model"] = loading
    answer.timings_ms["embed_query"] = ms - loading
    return vector


def keyword_runs(
    scoped: Sequence[tuple[str, Pipeline]], request: RecallRequest, k: int
) -> dict[str, Future[tuple[Run, float]]]:
    """Run each scope's keyword search here (the query's embedding runs meanwhile on a
    worker thread, :func:`start_embedding`)."""
    return {
        scope: run_timed(pipeline.arms.keyword.search, request.text, request.filters, k)
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
    words, pipelines = content_words(text), dict(scoped)

    def lexical(scope: str, ids: Sequence[int]) -> list[float]:
        chunks = {c.id: c for c in pipelines[scope].arms.storage.get_chunks(list(ids))}
        return [coverage(words, embedding_text(chunks[i])) if i in chunks else 0.0 for i in ids]

    return lexical
