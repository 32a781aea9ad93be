"""The bundled MiniLM's query embedding with ``arms.fastembed.query_threads`` 1 and 2
(spin off and on), alternated in one process, on the first 100 SciFact claims (~20
tokens) and the first 100 LoCoMo questions (~11): wall p50 / p10 and process CPU p50 per
query, in ms, and whether the vectors are the same bits.

    python benchmarks/results/conversations/query_threads.py [ROUNDS] [DATA]

DATA: the folder holding scifact/ and locomo/ in BEIR layout (default ../shared/data).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from octomem.plugins.fastembed.embedder import FastembedEmbedder, FastembedOptions

DATA = Path(sys.argv[2]) if len(sys.argv) > 2 else Path("../shared/data")


def first_queries(name: str) -> list[str]:
    """Return the first 100 query texts of dataset ``name`` under DATA."""
    with (DATA / name / "queries.jsonl").open() as fh:
        return [json.loads(line)["text"] for line in fh][:100]


def main() -> None:
    """Run the alternated rounds and print the table."""
    claims, questions = first_queries("scifact"), first_queries("locomo")
    configs = {"1 thread": dict(query_threads=1), "2 threads": dict(query_threads=2),
               "2 threads, spin": dict(query_threads=2, spin=True)}
    embedders = {n: FastembedEmbedder(FastembedOptions(**kw)) for n, kw in configs.items()}
    ref = {}
    for n, e in embedders.items():
        e.load()
        for t in claims[:5] + questions[:5]:
            e.embed_query(t)
        ref[n] = np.stack([e.embed_query(t) for t in claims[:20]])
    same = all(np.array_equal(ref["1 thread"], v) for v in ref.values())
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    times = {(n, s): ([], []) for n in configs for s in ("claims", "questions")}
    print("load before", os.getloadavg())
    for r in range(rounds):
        for n, e in (embedders.items() if r % 2 == 0 else reversed(embedders.items())):
            for s, texts in (("claims", claims), ("questions", questions)):
                wall, cpu = times[(n, s)]
                for t in texts:
                    w0, c0 = time.perf_counter(), time.process_time()
                    e.embed_query(t)
                    wall.append((time.perf_counter() - w0) * 1e3)
                    cpu.append((time.process_time() - c0) * 1e3)
    print("load after", os.getloadavg(), "vectors bit-identical across configs:", same)
    print("| config | texts | wall p50 ms | wall p10 ms | process CPU p50 ms |")
    print("|---|---|---:|---:|---:|")
    for (n, s), (wall, cpu) in times.items():
        q = statistics.quantiles(wall, n=10)
        print(f"| {n} | {s} | {statistics.median(wall):.2f} | {q[0]:.2f} | "
              f"{statistics.median(cpu):.2f} |")


if __name__ == "__main__":
    main()
