"""The keyword arm's in-RAM ranking alone, MaxScore pruning against the exhaustive sum,
interleaved per query in one process: the answers compared (ids and scores, exactly) and
the time of ``PostingIndex.ranked`` (wall and this thread's CPU). SciFact test claims as
the arm tokenizes them. Usage::

    nice -n 5 python keyword_ab.py PROJECT 100,10 [SCIFACT_DIR]
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from octomem.engine.memory.facade import open_memory
from octomem.plugins.fts5.arm import query_terms


def main() -> None:
    """Print, per k, how many answers are identical and the p50/p95 of both paths."""
    root, ks = Path(sys.argv[1]), [int(k) for k in sys.argv[2].split(",")]
    data = Path(sys.argv[3] if len(sys.argv) > 3 else "/work/shared/data/scifact")
    qids = {line.split("\t")[0] for line in (data / "qrels/test.tsv").read_text().splitlines()[1:]}
    rows = [json.loads(line) for line in (data / "queries.jsonl").read_text().splitlines()]
    memory = open_memory(project_root=root)
    arm = memory.scopes.get("local").arms.keyword
    arm.warm()
    index, conn = arm.postings, arm.storage.connection()
    tokens = [arm._tokens(conn, query_terms(r["text"], True, 256, True))
              for r in rows if r["_id"] in qids]
    tokens = [t for t in tokens if t]
    for t in tokens[:30]:
        index.ranked(t, 100)
    print("chunks", index.live_rows, "queries", len(tokens), "load", os.getloadavg())
    for k in ks:
        wall: dict = {True: [], False: []}
        cpu: dict = {True: [], False: []}
        same = 0
        for i, t in enumerate(tokens):
            got = {}
            for prune in (True, False) if i % 2 else (False, True):
                w, c = time.perf_counter(), time.thread_time()
                got[prune] = index.ranked(t, k, None, prune)
                wall[prune].append(time.perf_counter() - w)
                cpu[prune].append(time.thread_time() - c)
            same += got[True] == got[False]
        def ms(values: list, q: float = 50) -> str:
            return f"{np.percentile(values, q) * 1e3:.1f}"

        print(f"k={k}: identical {same}/{len(tokens)}; pruned p50 {ms(wall[True])} ms "
              f"(cpu {ms(cpu[True])}), p95 {ms(wall[True], 95)}; exhaustive p50 "
              f"{ms(wall[False])} ms (cpu {ms(cpu[False])}), p95 {ms(wall[False], 95)}; "
              f"cpu ratio {np.sum(cpu[True]) / np.sum(cpu[False]):.2f}")
    print("load", os.getloadavg())


if __name__ == "__main__":
    main()
