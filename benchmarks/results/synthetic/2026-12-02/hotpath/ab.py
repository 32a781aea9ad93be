"""Interleaved A/B of the hybrid ``Pipeline.search`` in one process (issue 15's unfiltered
hybrid p50): the read-ahead of each half's chunks on or off (off = the code before it),
and the two arms one after the other (``retrieval.parallel_arms`` off), switched on the
same pipeline before each query, in rotating order per query so that machine noise hits
all alike. Before each query the process-wide caches a previous configuration could
have warmed for the same query are emptied (the storage's chunk cache, relevance's
content words, dedup's normalised texts): every configuration meets the query cold, as
the curve's first row does. SciFact test claims, top_k 10, the curve's row
``hybrid=fts5+sqlite-vec+rrf+cosine``. Reports wall, process CPU (all threads) and the
calling thread's CPU p50 per configuration (the last is the critical path when the
second core is free: the embedding, with ``query_threads`` 1, runs on the calling
thread), and its stages' p50. Usage, from the repository root::

    nice -n 5 python benchmarks/results/synthetic/2026-12-02/hotpath/ab.py STORE N [warm]

``STORE``: a curve cache entry (``~/.cache/octomem/bench/realistic-n10000-*/fastembed-*``).
``warm``: keep the caches (a second pass over the same queries would see them).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

from octomem.benchmarks import baseline, synthetic_data
from octomem.benchmarks.combos import parse_combo
from octomem.engine import read_path, relevance
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Query
from octomem.plugins.dedup import cosine

ROW = "hybrid=fts5+sqlite-vec+rrf+cosine"
CONFIGS = ["read-ahead", "before", "serial"]
SCIFACT = Path("/work/shared/data/scifact")
_read_ahead = read_path.ReadPath._read_ahead


def claims(n: int) -> list[str]:
    """Return the first ``n`` SciFact test claims (the curve's queries)."""
    qids = {line.split("\t")[0]
            for line in (SCIFACT / "qrels/test.tsv").read_text().splitlines()[1:]}
    rows = map(json.loads, (SCIFACT / "queries.jsonl").read_text().splitlines())
    return [r["text"] for r in rows if r["_id"] in qids][:n]


def use(pipe: Pipeline, config: str) -> None:
    """Switch ``pipe`` to ``config``."""
    object.__setattr__(pipe.settings.retrieval, "parallel_arms", config != "serial")
    read_path.ReadPath._read_ahead = (  # type: ignore[method-assign]
        _read_ahead if config == "read-ahead" else lambda self, hits: {})


def cold(pipe: Pipeline) -> None:
    """Empty the caches an earlier configuration filled for the same query."""
    relevance.content_words.cache_clear()
    cosine.normalise_text.cache_clear()
    pipe.arms.storage._cache.changed(None)


def main() -> None:
    """Print p50s per configuration and each one's ratio to ``before``."""
    root, n, keep = Path(sys.argv[1]), int(sys.argv[2]), "warm" in sys.argv[3:]
    texts = claims(n)
    registry = load_registry(extra_plugins=[baseline, synthetic_data])
    combo = parse_combo(ROW, registry, load_settings(None, {}).settings)
    pipe = Pipeline(load_settings(None, combo.settings_overrides()), registry, root)
    pipe.warm()
    for text in texts[:5]:  # untimed warm-up of every configuration
        for config in CONFIGS:
            use(pipe, config)
            pipe.search(Query(text, top_k=10))
    wall: dict[str, list[float]] = {c: [] for c in CONFIGS}
    cpu: dict[str, list[float]] = {c: [] for c in CONFIGS}
    main_cpu: dict[str, list[float]] = {c: [] for c in CONFIGS}
    stages: dict[str, list[dict[str, float]]] = {c: [] for c in CONFIGS}
    hits: dict[str, list[object]] = {c: [] for c in CONFIGS}
    start = os.getloadavg()
    for i, text in enumerate(texts):
        for config in CONFIGS[i % len(CONFIGS):] + CONFIGS[:i % len(CONFIGS)]:
            use(pipe, config)
            if not keep:
                cold(pipe)
            c, m, w = time.process_time(), time.thread_time(), time.perf_counter()
            answer = pipe.search(Query(text, top_k=10))
            wall[config].append((time.perf_counter() - w) * 1e3)
            cpu[config].append((time.process_time() - c) * 1e3)
            main_cpu[config].append((time.thread_time() - m) * 1e3)
            stages[config].append(answer.timings_ms)
            hits[config].append([(h.chunk.id, h.score, h.relevance) for h in answer.hits])
    print(f"{root}: {len(texts)} queries, caches {'kept' if keep else 'emptied'}, load "
          f"{[round(x, 2) for x in start]} -> {[round(x, 2) for x in os.getloadavg()]}")
    print("identical answers:", all(hits[c] == hits["before"] for c in CONFIGS))
    base_wall, base_cpu = statistics.median(wall["before"]), statistics.median(cpu["before"])
    base_main = statistics.median(main_cpu["before"])
    for config in CONFIGS:
        med = {k: round(statistics.median(s.get(k, 0.0) for s in stages[config]), 2)
               for k in ("embed_query", "sqlite-vec", "fts5")}
        p50, c50 = statistics.median(wall[config]), statistics.median(cpu[config])
        m50 = statistics.median(main_cpu[config])
        print(f"{config:10} wall p50 {p50:6.2f} ms ({p50 / base_wall:.2f}x before), "
              f"CPU p50 {c50:6.2f} ms ({c50 / base_cpu:.2f}x), calling thread's CPU p50 "
              f"{m50:6.2f} ms ({m50 / base_main:.2f}x), stages {med}")


if __name__ == "__main__":
    main()
