"""Recall@10 vs exact and CPU time of the projection's (dimensions, candidates) at 1M,
on the SciFact *train* claims (the split that may choose settings). A d-dimension
projection is the first d columns of the stored 96-dimension one (the same top
eigenvectors, :meth:`VectorMatrix._candidates`). Usage::

    nice -n 5 python vector_sweep.py PROJECT N_CLAIMS 96/1000,64/3000,48/5000 [SCIFACT_DIR]
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from octomem.engine.memory.facade import open_memory
from octomem.plugins.sqlite_vec.matrix import one_blas_thread, top_rows


def main() -> None:
    """Print, per configuration, recall@10 vs an exact scan and the median CPU ms."""
    root, nq = Path(sys.argv[1]), int(sys.argv[2])
    configs = [tuple(int(x) for x in c.split("/")) for c in sys.argv[3].split(",")]
    data = Path(sys.argv[4] if len(sys.argv) > 4 else "/work/shared/data/scifact")
    qids = {line.split("\t")[0] for line in (data / "qrels/train.tsv").read_text().splitlines()[1:]}
    rows = [json.loads(line) for line in (data / "queries.jsonl").read_text().splitlines()]
    memory = open_memory(project_root=root)
    pipe = memory.scopes.get("local")
    pipe.warm()
    embedder, sem = pipe.arms.embedder, pipe.arms.semantic
    queries = np.stack([embedder.embed_query(r["text"]) for r in rows if r["_id"] in qids][:nq])
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    mx = sem._matrix(sem.bound)
    n = mx.count
    X, inv, red, P = mx.matrix, mx.inv_norms[:n], mx.reduced[:n], mx.projection.basis
    truth = []
    for i in range(0, nq, 25):
        s = (queries[i:i + 25] @ X[:n].T) * inv
        truth += [set(np.argpartition(-r, 10)[:10].tolist()) for r in s]
    rec: dict = {c: [] for c in configs}
    cpu: dict = {c: [] for c in configs}
    with one_blas_thread():
        for qi, q in enumerate(queries):
            for c in configs if qi % 2 else configs[::-1]:
                d, k = c
                t = time.thread_time()
                a = (red[:, :d] @ (q @ P[:, :d])) * inv
                cand = top_rows(a, k + 100)  # the arm asks candidates + k (k = 100)
                top = cand[top_rows((X[cand] @ q) * inv[cand], 10)]
                cpu[c].append(time.thread_time() - t)
                rec[c].append(len(truth[qi] & set(top.tolist())) / 10)
    print("vectors", n, "claims", nq, "load", os.getloadavg())
    for c in configs:
        print(f"dims {c[0]} candidates {c[1]}: recall@10 {np.mean(rec[c]):.4f} "
              f"cpu p50 {np.median(cpu[c]) * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
