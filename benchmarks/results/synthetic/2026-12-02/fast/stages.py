"""Where the curve's unfiltered ``hybrid`` row spends its time, stage by stage, as the
curve runs it (``retrieval.parallel_arms`` on: the keyword arm on a worker while the
calling thread embeds the query and scans the vectors), from a copy of
``ReadPath.search`` with a clock between stages: the calling thread's CPU
(``time.thread_time_ns``) and wall per stage, p50 over the claims. Caches are kept (as
in the curve, where each claim is asked once). Usage, from the repository root::

    nice -n 5 .venv/bin/python benchmarks/results/synthetic/2026-12-02/fast/stages.py STORE N

``STORE``: a curve cache entry (``$XDG_CACHE_HOME/octomem/bench/realistic-n10000-*/fastembed-*``).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import common  # noqa: E402

from octomem.engine import read_path as rp  # noqa: E402
from octomem.engine.chunking import embedding_text  # noqa: E402
from octomem.engine.types import Answer, Query  # noqa: E402

CPU: dict[str, list[float]] = defaultdict(list)
WALL: dict[str, list[float]] = defaultdict(list)


def search(self: rp.ReadPath, query: Query) -> list[object]:
    """``ReadPath.search``'s stages for a hybrid row without reranker (timed)."""
    clock = [time.thread_time_ns(), time.perf_counter_ns()]

    def lap(name: str) -> None:
        c, w = time.thread_time_ns(), time.perf_counter_ns()
        CPU[name].append((c - clock[0]) / 1e6)
        WALL[name].append((w - clock[1]) / 1e6)
        clock[:] = [c, w]

    answer = Answer(hits=[], arms_ran=[], arms_unavailable={}, semantic_available=False)
    retrieval = self.settings.retrieval
    depth, k = query.top_k * 3, max(retrieval.candidate_k, query.top_k)
    runs, vector, ahead = self._runs(query, k, depth, answer)
    for stage in ("embed_query", "sqlite-vec", "fts5"):
        WALL[f"({stage})"].append(answer.timings_ms[stage])
    lap("arms")
    fused = self._fuse(runs)
    lap("fusion")
    self._without_vector()
    lap("chunks without vector")
    hits = self._load(fused[:depth], 0, ahead)
    lap("load chunks")
    hits = rp.order_documents(hits, fused, retrieval.fusion, retrieval.document_fusion,
                              retrieval.weights, rp.run_bounds(runs))
    lap("document order")
    vectors = self._vectors(hits)
    lap("hits' vectors")
    similarity = rp.similarities(vectors, vector)
    cos = {h.chunk.id: float(c) for h, c in zip(hits, similarity, strict=True)}
    vectors.any(axis=1).tolist()
    lap("cosines")
    hits, _ = self.arms.dedup.dedup(hits, vectors)
    lap("dedup")
    judge = rp.HitJudge(retrieval, self.arms, runs, query.filters,
                        [embedding_text(h.chunk) for h in hits[:rp.JUDGED_HITS]], k)
    out = [rp.fused_hit(h.chunk, h.score, i, h.contributions,
                        judge(query.text, h, embedding_text(h.chunk), cos.get(h.chunk.id)))
           for i, h in enumerate(hits[:query.top_k], start=1)]
    lap("relevance + hits")
    return [(h.chunk.id, h.score, h.relevance) for h in out]


def main() -> None:
    """Print each stage's p50 (calling thread's CPU, wall)."""
    root, n = Path(sys.argv[1]), int(sys.argv[2])
    texts = common.claims(n)
    pipe = common.pipeline(root)
    load = os.getloadavg()
    same = True
    for text in texts:
        got = search(pipe, Query(text, top_k=10))
        want = [(h.chunk.id, h.score, h.relevance) for h in pipe.search(Query(text, top_k=10)).hits]
        same &= got == want
    print(f"{root}: {len(texts)} queries, load {[round(x, 2) for x in load]} -> "
          f"{[round(x, 2) for x in os.getloadavg()]}; copy answers as search: {same}")
    total_cpu = total_wall = 0.0
    for name in WALL:
        w50 = statistics.median(WALL[name])
        c50 = statistics.median(CPU[name]) if name in CPU else float("nan")
        if name in CPU:
            total_cpu += c50
            total_wall += w50
        print(f"  {name:24} CPU p50 {c50:6.3f} ms   wall p50 {w50:6.3f} ms")
    print(f"  {'sum of p50s':24} CPU     {total_cpu:6.3f} ms   wall     {total_wall:6.3f} ms")


if __name__ == "__main__":
    main()
