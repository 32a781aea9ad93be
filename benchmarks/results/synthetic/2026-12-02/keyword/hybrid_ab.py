"""The 1M hybrid end to end with the keyword arm's MaxScore before / after this
folder's change, switched before each query on one pipeline, the two in alternating
order (so machine noise hits both alike): ``Pipeline.search`` at top_k 10, the query's
embedding included, SciFact test claims; the answers compared. "before" is
``maxscore.py`` as it was (a copy given on the command line). Usage::

    nice -n 5 python hybrid_ab.py PROJECT BEFORE.py N_QUERIES [SCIFACT_DIR]
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from octomem.engine.memory.facade import open_memory
from octomem.engine.types import Query
from octomem.plugins.fts5 import maxscore
from octomem.plugins.fts5 import postings as fts5_postings


def main() -> None:
    """Print p50/p95 and stage medians per configuration, and after / before."""
    root, before_file, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    data = Path(sys.argv[4] if len(sys.argv) > 4 else "/work/shared/data/scifact")
    spec = importlib.util.spec_from_file_location("maxscore_before", before_file)
    assert spec is not None and spec.loader is not None
    before = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(before)
    qids = {line.split("\t")[0] for line in (data / "qrels/test.tsv").read_text().splitlines()[1:]}
    rows = [json.loads(line) for line in (data / "queries.jsonl").read_text().splitlines()]
    texts = [r["text"] for r in rows if r["_id"] in qids][:n]
    memory = open_memory(overrides={"retrieval": {"relevance_floor": 0,
                                                  "document_relevance_floor": 0}},
                         project_root=root)
    pipe = memory.scopes.get("local")
    pipe.arms.embedder.load()
    pipe.warm()
    configs = {"before": before, "after": maxscore}
    for text in texts[:10]:  # untimed warm-up of both
        for module in configs.values():
            fts5_postings.maxscore = module  # type: ignore[assignment]
            pipe.search(Query(text=text, top_k=10))
    wall: dict[str, list[float]] = {c: [] for c in configs}
    stages: dict[str, list[dict]] = {c: [] for c in configs}
    differ = 0
    start = os.getloadavg()
    for i, text in enumerate(texts):
        names = list(configs) if i % 2 else list(reversed(configs))
        got = {}
        for name in names:
            fts5_postings.maxscore = configs[name]  # type: ignore[assignment]
            t = time.perf_counter()
            answer = pipe.search(Query(text=text, top_k=10))
            wall[name].append(time.perf_counter() - t)
            stages[name].append(answer.timings_ms)
            got[name] = [(h.chunk.id, h.score) for h in answer.hits]
        differ += got["before"] != got["after"]
    print("queries", len(texts), "load", [round(x, 2) for x in start], "->",
          [round(x, 2) for x in os.getloadavg()], "answers differing", differ)
    base = statistics.median(wall["before"])
    for name in configs:
        med = {k: round(statistics.median(s.get(k, 0) for s in stages[name]), 1)
               for k in ("embed_query", "sqlite-vec", "fts5")}
        print(f"{name:6s} p50 {statistics.median(wall[name]) * 1e3:7.1f} ms p95 "
              f"{np.percentile(wall[name], 95) * 1e3:7.1f} ms, p50 / before "
              f"{statistics.median(wall[name]) / base:.3f}, stages {med}")


if __name__ == "__main__":
    main()
