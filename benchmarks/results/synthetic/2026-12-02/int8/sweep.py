"""Recall@10 vs exact and CPU time of the approximate vector stage at 1M: the float32
projection scan against its int8 codes (``approximate_scan``), per number of candidates,
on the SciFact *train* claims (the split that may choose settings). Each configuration
runs the real :meth:`VectorMatrix.top_k` (scan, top rows, exact re-scoring; k = 100 as
the hybrid asks), configurations alternated per query. Usage (a project holding the
store with its snapshots; the first run codes the projection and saves the snapshot)::

    nice -n 5 python sweep.py PROJECT N_CLAIMS int8/1000,float32/1000,int8/500 [SCIFACT_DIR]
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from octomem.engine.memory.facade import open_memory
from octomem.plugins.sqlite import snapshots


def main() -> None:
    """Print, per configuration, recall@10 vs an exact scan and the median CPU ms."""
    root, nq = Path(sys.argv[1]), int(sys.argv[2])
    configs = [(c.split("/")[0], int(c.split("/")[1])) for c in sys.argv[3].split(",")]
    data = Path(sys.argv[4] if len(sys.argv) > 4 else "/work/shared/data/scifact")
    qids = {line.split("\t")[0] for line in (data / "qrels/train.tsv").read_text().splitlines()[1:]}
    rows = [json.loads(line) for line in (data / "queries.jsonl").read_text().splitlines()]
    memory = open_memory(project_root=root)
    pipe = memory.scopes.get("local")
    pipe.warm()
    embedder, sem = pipe.arms.embedder, pipe.arms.semantic
    queries = np.stack([embedder.embed_query(r["text"]) for r in rows if r["_id"] in qids][:nq])
    mx = sem._matrix(sem.bound)
    t = time.perf_counter()
    mx.top_k(queries[0], 100, None)  # codes the projection if the snapshot had none
    print(f"first search {time.perf_counter() - t:.2f} s, codes {mx.codes.shape}")
    snapshots.wait_for_saves(mx.snapshot.db)
    n, inv = mx.count, mx.inv_norms[:mx.count]
    truth = []
    for i in range(0, nq, 25):
        s = (queries[i:i + 25] @ mx.matrix[:n].T) * inv
        truth += [set(mx.ids[np.argpartition(-r, 10)[:10]].tolist()) for r in s]
    above, dims, _ = mx.reduce
    rec: dict = {c: [] for c in configs}
    cpu: dict = {c: [] for c in configs}
    start = os.getloadavg()
    for qi, q in enumerate(queries):
        for c in configs if qi % 2 else configs[::-1]:
            mx.quantized, mx.reduce = c[0] == "int8", (above, dims, c[1])
            t = time.thread_time()
            top = mx.top_k(q, 100, None)
            cpu[c].append(time.thread_time() - t)
            rec[c].append(len(truth[qi] & set(top.ids[:10].tolist())) / 10)
    print("vectors", n, "claims", nq, "load", [round(x, 1) for x in start], "->",
          [round(x, 1) for x in os.getloadavg()])
    for c in configs:
        print(f"{c[0]:8} candidates {c[1]:5}: recall@10 {np.mean(rec[c]):.4f} "
              f"(min {np.min(rec[c]):.1f}) cpu p50 {np.median(cpu[c]) * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
