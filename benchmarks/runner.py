"""Running one combination: open its pipeline on a cache entry, ask every query, time it."""

from __future__ import annotations

import gc
import os
import resource
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from octomem.engine.manager import ArmRegistry
from octomem.engine.pipeline import Pipeline
from octomem.engine.types import Answer, Filters, Query

from .cache import CacheEntry, ProgressFor, SettingsFor, no_progress
from .combos import Combo
from .dataset import BeirDataset

#: Stage name for end-to-end time in ``Answer.timings_ms``.
TOTAL = "total"
#: Stage name for what ``total`` spends outside the timed arms (fusion, fetching chunks
#: and vectors, rerank, dedup).
OTHER = "other"


@dataclass(slots=True)
class ComboResult:
    """What one combination returned and cost.

    :param run: query id -> {document id -> score}; scores follow the answer's order.
    :param timings_ms: stage -> one wall time per query, in milliseconds.
    :param warmup_ms: the arms' warm-up and the first (untimed) query: model loads and
        lazy index builds.
    :param timings_ms: stage -> one wall time per query, in milliseconds, of the latency
        pass (``latency_top_k`` hits, what an agent asks for).
    :param eval_timings_ms: the same for the quality pass (``top_k`` hits).
    :param peak_rss_bytes: the process's peak resident set size while this row ran
        (reset before it where Linux allows, see :func:`reset_peak_rss`).
    :param rss_bytes: resident set size right after this row, before its pipeline closes.
    """

    combo: Combo
    run: dict[str, dict[str, float]]
    timings_ms: dict[str, list[float]]
    warmup_ms: float
    arms_ran: list[str]
    arms_unavailable: dict[str, str]
    index_bytes: int
    peak_rss_bytes: int
    rss_bytes: int
    eval_timings_ms: dict[str, list[float]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def percentile(self, stage: str, q: float, eval_pass: bool = False) -> float | None:
        """Return the ``q``-th percentile (0-100) of ``stage``'s times in ms, or ``None``."""
        values = (self.eval_timings_ms if eval_pass else self.timings_ms).get(stage)
        return float(np.percentile(values, q)) if values else None


def reset_peak_rss() -> bool:
    """Reset the process's peak RSS (Linux >= 4.0: ``5`` into ``/proc/self/clear_refs``).

    :returns: whether it could be reset (otherwise peaks include earlier work).
    """
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def peak_rss_bytes() -> int:
    """Return the peak resident set size in bytes since the last :func:`reset_peak_rss`
    (``VmHWM``), else since the process started (``ru_maxrss``, KiB on Linux)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


def rss_bytes() -> int:
    """Return the current resident set size in bytes (0 where ``/proc`` is missing)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def document_run(answer: Answer) -> dict[str, float]:
    """Turn an answer's chunk hits into a document ranking (best chunk per document).

    :returns: document id -> score ``n - i`` for the ``i``-th distinct document (0-based)
        of ``n``, so scores keep the answer's order exactly (after rerank and dedup too).
    """
    order: list[str] = []
    for hit in answer.hits:
        if hit.chunk.document_id not in order:
            order.append(hit.chunk.document_id)
    return {doc: float(len(order) - i) for i, doc in enumerate(order)}


def arms_ms(stages: dict[str, float], arms: Arms) -> float:
    """Wall time the retrieval arms took out of a query's ``stages`` (ms): the keyword
    stage plus embedding and semantic stages, or the longer of the two halves when they
    ran side by side (``retrieval.parallel_arms``)."""
    keyword = stages.get(arms.keyword, 0.0) if arms.keyword else 0.0
    semantic = sum(stages.get(s, 0.0) for s in arms.semantic)
    return max(keyword, semantic) if arms.parallel else keyword + semantic


@dataclass(frozen=True, slots=True)
class Arms:
    """The stage names of a row's retrieval arms, and whether its halves overlap."""

    keyword: str | None
    semantic: tuple[str, ...]
    parallel: bool


def _record(
    timings: dict[str, list[float]], answer: Answer, wall_ms: float, arms: Arms
) -> None:
    stages = dict(answer.timings_ms)
    stages[TOTAL] = wall_ms
    stages[OTHER] = max(wall_ms - arms_ms(stages, arms), 0.0)
    for stage, ms in stages.items():
        timings.setdefault(stage, []).append(ms)


def _ask(
    pipeline: Pipeline,
    text: str,
    top_k: int,
    filters: Filters,
    timings: dict[str, list[float]],
    arms: Arms,
) -> Answer:
    query = Query(text, top_k=top_k, filters=filters)
    start = time.perf_counter()
    answer = pipeline.search(query)
    _record(timings, answer, (time.perf_counter() - start) * 1e3, arms)
    return answer


def spread(items: list[str], n: int) -> list[str]:
    """Return ``n`` items evenly spaced through ``items`` (all of them when ``n >= len``)."""
    if n >= len(items):
        return list(items)
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


def run_combo(
    combo: Combo,
    entry: CacheEntry,
    dataset: BeirDataset,
    filters: Mapping[str, Filters],
    settings_for: SettingsFor,
    registry: ArmRegistry,
    top_k: int,
    advance: Callable[[int], None] | None = None,
    latency_top_k: int | None = None,
    latency_queries: int = 300,
    after: Callable[[Pipeline, dict[str, dict[str, float]]], dict[str, Any]] | None = None,
    progress: ProgressFor | None = None,
    label: str | None = None,
) -> ComboResult:
    """Ask every query of ``dataset`` through ``combo``'s pipeline opened on ``entry``.

    The arms warm up first (:meth:`Pipeline.warm`, as the MCP server's arms do: in-RAM
    vectors and postings), then one untimed warm-up query, then the quality pass (every
    query at ``top_k``), then the latency pass (``latency_queries`` queries spread over
    the set, at ``latency_top_k``).
    Times are wall times of ``Pipeline.search``; stages are the answer's ``timings_ms``.

    :param top_k: hits per answer in the quality pass (100 so recall@100 can be measured).
    :param latency_top_k: hits per answer in the latency pass; ``None``: no separate pass,
        the quality pass's times are reported.
    :param after: run last on the open pipeline with the quality pass's run; what it
        returns is kept in ``extra["after"]`` (the abstention pass).
    :param advance: counts the quality pass's queries; without it, ``progress`` reports
        that pass too.
    :param progress: reports the warm-up, the quality pass, the latency pass and
        ``after``, so no phase is silent when output is piped.
    :param label: names the row in those reports (default: the combination's name).
    """
    progress = progress or no_progress
    label = label or combo.name
    reset_peak_rss()
    pipeline = Pipeline(settings_for(combo.settings_overrides()), registry, entry.root)
    try:
        qids = list(dataset.queries)
        warmed = progress(f"warming {label}", None)
        pipeline.warm(("reranker",))  # its word table, built once per machine: untimed
        start = time.perf_counter()
        pipeline.warm()
        pipeline.search(Query(dataset.queries[qids[0]], top_k=top_k, filters=filters[qids[0]]))
        warmup_ms = (time.perf_counter() - start) * 1e3
        warmed(1)
        advance = advance or progress(f"querying {label}", len(qids))
        run: dict[str, dict[str, float]] = {}
        evals: dict[str, list[float]] = {}
        ran: list[str] = []
        unavailable: dict[str, str] = {}
        semantic = (combo.semantic, "embed_query") if combo.semantic else ()
        parallel = bool(combo.keyword and semantic
                        and pipeline.settings.retrieval.parallel_arms)
        arms = Arms(combo.keyword, semantic, parallel)
        for qid in qids:
            answer = _ask(pipeline, dataset.queries[qid], top_k, filters[qid], evals, arms)
            run[qid] = document_run(answer)
            ran += [a for a in answer.arms_ran if a not in ran]
            unavailable.update(answer.arms_unavailable)
            advance(1)
        timings = evals
        if latency_top_k is not None:
            timings = {}
            timed = spread(qids, latency_queries)
            tick = progress(f"timing {label} (top {latency_top_k})", len(timed))
            for qid in timed:
                _ask(pipeline, dataset.queries[qid], latency_top_k, filters[qid], timings, arms)
                tick(1)
        current = rss_bytes()
        extra = {}
        if after is not None:
            asked = progress(f"abstention pass {label}", None)
            extra = {"after": after(pipeline, run)}
            asked(1)
    finally:
        pipeline.close()
    del pipeline
    gc.collect()
    return ComboResult(
        combo=combo,
        run=run,
        timings_ms=timings,
        warmup_ms=warmup_ms,
        arms_ran=ran,
        arms_unavailable=unavailable,
        index_bytes=entry.index_bytes(combo.keyword, combo.semantic),
        peak_rss_bytes=peak_rss_bytes(),
        rss_bytes=current,
        eval_timings_ms=evals,
        extra=extra,
    )
