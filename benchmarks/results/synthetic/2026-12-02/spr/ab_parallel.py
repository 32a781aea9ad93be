"""In one process, the curve's ``hybrid`` row with ``retrieval.parallel_arms`` on (the
keyword arm on a worker thread while the query is embedded and the vectors scanned) and
off (one thread), switched per query in rotating order; wall and calling-thread CPU p50,
the median per-query ratio off / on, and whether every answer is the same.

    nice -n 5 python benchmarks/results/synthetic/2026-12-02/spr/ab_parallel.py STORE N ROUNDS
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "fast"))
import common  # noqa: E402

from octomem.engine.types import Query  # noqa: E402


def main() -> None:
    root, n, rounds = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    texts = common.claims(n)
    pipe = common.pipeline(root)
    modes = {"parallel": True, "series": False}
    wall: dict[str, list[float]] = {m: [] for m in modes}
    cpu: dict[str, list[float]] = {m: [] for m in modes}
    same, load = True, os.getloadavg()[0]
    for r in range(rounds):
        for i, text in enumerate(texts):
            names = list(modes)[(i + r) % 2:] + list(modes)[:(i + r) % 2]
            got = {}
            for mode in names:
                pipe.settings.retrieval.parallel_arms = modes[mode]
                w, c = time.perf_counter_ns(), time.thread_time_ns()
                answer = pipe.search(Query(text, top_k=10))
                wall[mode].append((time.perf_counter_ns() - w) / 1e6)
                cpu[mode].append((time.thread_time_ns() - c) / 1e6)
                got[mode] = [(h.chunk.id, h.score, h.relevance) for h in answer.hits]
            same &= got["parallel"] == got["series"]
    pipe.settings.retrieval.parallel_arms = True
    print(f"{root.parent.name}: {n} claims x {rounds}, load {load:.2f} -> "
          f"{os.getloadavg()[0]:.2f}; same answers: {same}")
    for mode in modes:
        print(f"  {mode:8s} wall p50 {statistics.median(wall[mode]):7.3f} ms (p25 "
              f"{statistics.quantiles(wall[mode], n=4)[0]:.3f}), calling thread CPU p50 "
              f"{statistics.median(cpu[mode]):6.3f} ms")
    per_query = [s / p for p, s in zip(wall["parallel"], wall["series"], strict=True)]
    print(f"  median per-query wall ratio series / parallel {statistics.median(per_query):.3f}")


if __name__ == "__main__":
    main()
