"""In one process, the curve's ``hybrid`` row (``Pipeline.search``, top_k 10) with the query
embedded by the shipped prepared graph or by other graph files (``graphs.py``; the same
tokenizer, 1 thread), switched per query in rotating order; the stored vectors stay the
shipped graph's (as an existing store's would). Wall and calling-thread CPU p50, the
median per-query ratio to the shipped graph, and in how many claims the top-10 ids differ.

    nice -n 5 python benchmarks/results/synthetic/2026-12-02/spr/ab_graph.py STORE N ROUNDS FILE...
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
from octomem.plugins.fastembed.query import QueryEncoder  # noqa: E402


def ratio(base: list[float], other: list[float]) -> float:
    """Median of the per-query ratios other / base."""
    return statistics.median(b / a for a, b in zip(base, other, strict=True))


def main() -> None:
    root, n, rounds, files = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
    texts = common.claims(n)
    pipe = common.pipeline(root)
    embedder = pipe.arms.embedder
    shipped = embedder._query
    encoders = {"shipped": shipped} | {
        Path(f).stem: QueryEncoder.open(f, ["CPUExecutionProvider"], shipped.tokenizer, 1,
                                        False, False) for f in files}
    wall: dict[str, list[float]] = {v: [] for v in encoders}
    cpu: dict[str, list[float]] = {v: [] for v in encoders}
    differ = dict.fromkeys(encoders, 0)
    names, load = list(encoders), os.getloadavg()[0]
    try:
        for r in range(rounds):
            for i, text in enumerate(texts):
                got = {}
                for v in names[(i + r) % len(names):] + names[:(i + r) % len(names)]:
                    embedder._query = embedder._model = encoders[v]
                    w, c = time.perf_counter_ns(), time.thread_time_ns()
                    answer = pipe.search(Query(text, top_k=10))
                    wall[v].append((time.perf_counter_ns() - w) / 1e6)
                    cpu[v].append((time.thread_time_ns() - c) / 1e6)
                    got[v] = [h.chunk.id for h in answer.hits]
                if r == 0:
                    for v in names:
                        differ[v] += got[v] != got["shipped"]
    finally:
        embedder._query = embedder._model = shipped
    print(f"{root.parent.name}: {n} claims x {rounds}, load {load:.2f} -> "
          f"{os.getloadavg()[0]:.2f}")
    for v in names:
        print(f"  {v:10s} wall p50 {statistics.median(wall[v]):7.3f} ms, CPU p50 "
              f"{statistics.median(cpu[v]):6.3f} ms; per-query ratio wall "
              f"{ratio(wall['shipped'], wall[v]):.3f}, CPU {ratio(cpu['shipped'], cpu[v]):.3f}; "
              f"top-10 ids differ in {differ[v]} of {n}")


if __name__ == "__main__":
    main()
