"""Where the int8 approximate stage's CPU goes at 1M (the real matrix restored from its
snapshot with codes; SciFact train claims as queries): the query's projection and code,
numkong's packed product, top rows, the exact re-scoring of the candidates, against
:meth:`VectorMatrix.top_k` whole. Usage (after ``sweep.py`` saved the codes)::

    nice -n 5 python parts.py PROJECT N_CLAIMS [SCIFACT_DIR]
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numkong
import numpy as np

from octomem.engine.memory.facade import open_memory
from octomem.plugins.sqlite_vec.projection import top_rows
from octomem.plugins.sqlite_vec.quantized import encode_query


def main() -> None:
    """Print the median CPU ms of each part."""
    root, nq = Path(sys.argv[1]), int(sys.argv[2])
    data = Path(sys.argv[3] if len(sys.argv) > 3 else "/work/shared/data/scifact")
    qids = {line.split("\t")[0] for line in (data / "qrels/train.tsv").read_text().splitlines()[1:]}
    rows = [json.loads(line) for line in (data / "queries.jsonl").read_text().splitlines()]
    memory = open_memory(project_root=root)
    pipe = memory.scopes.get("local")
    sem = pipe.arms.semantic
    mx = sem._matrix(sem.bound)
    mx.ready()
    queries = [pipe.arms.embedder.embed_query(r["text"]) for r in rows if r["_id"] in qids][:nq]
    dims = mx.codes.shape[1]
    parts: dict[str, list[float]] = {k: [] for k in (
        "project + code the query", "numkong dots_packed", "top 1,100 rows",
        "exact re-scoring", "sum", "VectorMatrix.top_k")}
    for q in queries:
        q = q / np.linalg.norm(q)
        t0 = time.thread_time()
        code = encode_query(mx.projection.apply(q[None, :])[0][:dims], mx.scale)
        t1 = time.thread_time()
        scores = np.asarray(numkong.dots_packed(code[None, :], mx.packed.packed))[0]
        t2 = time.thread_time()
        cand = top_rows(scores, 1100)
        t3 = time.thread_time()
        (mx.matrix[cand] @ q) * mx.inv_norms[cand]
        t4 = time.thread_time()
        mx.top_k(q, 100, None)
        t5 = time.thread_time()
        for key, v in zip(parts, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0, t5 - t4),
                          strict=True):
            parts[key].append(v * 1e3)
    print("vectors", mx.count, "claims", len(queries), "load", os.getloadavg())
    for key, v in parts.items():
        print(f"{key}: {np.median(v):.2f} ms CPU")


if __name__ == "__main__":
    main()
