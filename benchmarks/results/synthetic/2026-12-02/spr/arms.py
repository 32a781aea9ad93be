"""Each half of the curve's unfiltered ``hybrid`` row alone, then whole searches, on one
curve cache entry: the calling thread's CPU and wall p50 of the query's embedding, the
vector arm (``sqlite-vec``, k = 100, the vector given), the keyword arm (``fts5``, k = 100)
and ``Pipeline.search`` at top_k 10 with ``retrieval.parallel_arms`` off and on. Every
claim is asked in each of two rounds (the second with warm per-process caches), as the
curve's queries are (the first N SciFact test claims).

    nice -n 5 python benchmarks/results/synthetic/2026-12-02/spr/arms.py STORE N
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "fast"))
import common  # noqa: E402

from octomem.engine.types import Filters, Query  # noqa: E402


def timed(n: int, call: Callable[[int], object]) -> tuple[float, float]:
    """Median calling-thread CPU and wall (ms) of ``call(i)`` for i < n."""
    cpu, wall = [], []
    for i in range(n):
        c, w = time.thread_time_ns(), time.perf_counter_ns()
        call(i)
        cpu.append((time.thread_time_ns() - c) / 1e6)
        wall.append((time.perf_counter_ns() - w) / 1e6)
    return statistics.median(cpu), statistics.median(wall)


def main() -> None:
    root, n = Path(sys.argv[1]), int(sys.argv[2])
    texts = common.claims(n)
    pipe = common.pipeline(root)
    embedder, semantic, keyword = pipe.arms.embedder, pipe.arms.semantic, pipe.arms.keyword
    vectors = [embedder.embed_query(t) for t in texts]
    none = Filters()
    load = os.getloadavg()[0]
    rows: dict[str, tuple[float, float]] = {}
    for _ in range(2):
        rows["embedding (embed_query)"] = timed(n, lambda i: embedder.embed_query(texts[i]))
        rows["vector arm"] = timed(n, lambda i: semantic.search(vectors[i], none, 100))
        rows["keyword arm"] = timed(n, lambda i: keyword.search(texts[i], none, 100))
        pipe.settings.retrieval.parallel_arms = False
        rows["search, arms in series"] = timed(n, lambda i: pipe.search(Query(texts[i], top_k=10)))
        pipe.settings.retrieval.parallel_arms = True
        rows["search, arms in parallel"] = timed(
            n, lambda i: pipe.search(Query(texts[i], top_k=10)))
    print(f"{root.parent.name}: {n} claims, load {load:.2f} -> {os.getloadavg()[0]:.2f} "
          "(second round shown)")
    for name, (cpu, wall) in rows.items():
        print(f"  {name:26s} calling thread CPU p50 {cpu:6.3f} ms   wall p50 {wall:6.3f} ms")


if __name__ == "__main__":
    main()
