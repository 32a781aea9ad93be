"""Interleaved A/B of the hybrid pipeline in one process: the vector stage's
``approximate_scan`` int8 / float32 x ``retrieval.parallel_arms`` on/off, switched on the
same pipeline before each query, the four in rotating order per query (so machine noise
hits all alike); SciFact test claims,
top_k 10, ``Pipeline.search`` wall time end to end (query embedding included) and its
stage times. Usage (a project whose ``.octomem/`` holds the store, e.g. the curve's 1M
store with its snapshots, copied to a project; the int8 codes already in its snapshot:
run ``sweep.py`` first)::

    nice -n 5 python ab.py PROJECT N_QUERIES [SCIFACT_DIR]
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from octomem.engine.memory.facade import open_memory
from octomem.engine.types import Query

CONFIGS = [(True, True), (False, True), (True, False), (False, False)]  # (int8, parallel)


def main() -> None:
    """Print p50/p95 and stage medians per configuration, and each p50 over the before's
    (float32, parallel: the code before)."""
    root, n = Path(sys.argv[1]), int(sys.argv[2])
    data = Path(sys.argv[3] if len(sys.argv) > 3 else "/work/shared/data/scifact")
    qids = {line.split("\t")[0] for line in (data / "qrels/test.tsv").read_text().splitlines()[1:]}
    rows = [json.loads(line) for line in (data / "queries.jsonl").read_text().splitlines()]
    texts = [r["text"] for r in rows if r["_id"] in qids][:n]
    memory = open_memory(overrides={"retrieval": {"relevance_floor": 0,
                                                  "document_relevance_floor": 0}},
                         project_root=root)
    pipe = memory.scopes.get("local")
    pipe.arms.embedder.load()
    pipe.warm()
    semantic = pipe.arms.semantic
    matrix = semantic._matrix(semantic.bound)

    def use(config: tuple[bool, bool]) -> None:
        matrix.quantized = config[0]
        object.__setattr__(pipe.settings.retrieval, "parallel_arms", config[1])

    for text in texts[:10]:  # untimed warm-up of every configuration
        for c in CONFIGS:
            use(c)
            pipe.search(Query(text=text, top_k=10))
    wall: dict = {c: [] for c in CONFIGS}
    stages: dict = {c: [] for c in CONFIGS}
    start = os.getloadavg()
    for i, text in enumerate(texts):
        for c in CONFIGS[i % 4:] + CONFIGS[:i % 4]:
            use(c)
            t = time.perf_counter()
            answer = pipe.search(Query(text=text, top_k=10))
            wall[c].append(time.perf_counter() - t)
            stages[c].append(answer.timings_ms)
    print("queries", len(texts), "load", [round(x, 2) for x in start], "->",
          [round(x, 2) for x in os.getloadavg()])
    base = statistics.median(wall[(False, True)])
    for c in CONFIGS:
        med = {k: round(statistics.median(s.get(k, 0) for s in stages[c]), 1)
               for k in ("embed_query", "sqlite-vec", "fts5")}
        print(f"int8={c[0]!s:5} parallel={c[1]!s:5} p50 {statistics.median(wall[c]) * 1e3:7.1f}"
              f" ms p95 {np.percentile(wall[c], 95) * 1e3:7.1f} ms, p50 / before "
              f"{statistics.median(wall[c]) / base:.2f}, stages {med}")


if __name__ == "__main__":
    main()
