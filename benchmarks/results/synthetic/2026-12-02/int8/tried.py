"""Two approximate stages tried at 1M and not kept, against the exact top 10 (SciFact
*train* claims as queries, the first N; the real store's snapshot arrays):

- ``ivf``: an inverted file on the unit 96-d projected rows (spherical k-means, C lists
  fitted on 100k rows, 10 rounds), the rows of the ``nprobe`` best lists scored by their
  projection, the best 1,100 exactly; recall@10 and CPU ms per nprobe;
- ``bits``: the projection quantized to ``bits`` per dimension (per-dimension scale from
  the largest component; the query quantized alike), scored in float (the integer
  product's order), its best ``candidates + 100`` scored exactly; recall@10 per
  configuration.

Usage (the vector snapshot folder of the store, e.g. ``.octomem/octomem.sqlite3.snapshots/
vec_*.<seq>.<tag>``)::

    nice -n 5 python tried.py PROJECT SNAPSHOT_FOLDER N ivf 1024 8,16,32,64
    nice -n 5 python tried.py PROJECT SNAPSHOT_FOLDER N bits 8/1000,4/1000,4/2000
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from octomem.engine.memory.facade import open_memory


def claims(root: Path, n: int) -> np.ndarray:
    """The first ``n`` SciFact train claims embedded by the project's embedder, unit rows."""
    data = Path("/work/shared/data/scifact")
    qids = {line.split("\t")[0] for line in (data / "qrels/train.tsv").read_text().splitlines()[1:]}
    rows = [json.loads(line) for line in (data / "queries.jsonl").read_text().splitlines()]
    embedder = open_memory(project_root=root).scopes.get("local").arms.embedder
    q = np.stack([embedder.embed_query(r["text"]) for r in rows if r["_id"] in qids][:n])
    return (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32)


def main() -> None:
    """Print recall@10 (and CPU for ``ivf``) per configuration."""
    root, snap, n, mode = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    queries = claims(root, n)
    full = np.ascontiguousarray(np.load(snap / "matrix.npy", mmap_mode="r"))
    inv = np.load(snap / "inv_norms.npy")
    basis = np.load(snap / "basis.npy")
    unit = np.ascontiguousarray(np.load(snap / "reduced.npy")) * inv[:, None]
    truth = []
    for i in range(0, len(queries), 25):
        for r in (queries[i:i + 25] @ full.T) * inv:
            truth.append(set(np.argpartition(-r, 10)[:10].tolist()))
    if mode == "ivf":
        ivf(queries, truth, full, inv, basis, unit, int(sys.argv[5]),
            [int(x) for x in sys.argv[6].split(",")])
    else:
        for conf in sys.argv[5].split(","):
            bits, cands = (int(x) for x in conf.split("/"))
            lim = 2 ** (bits - 1) - 1
            scale = lim / np.abs(unit).max(axis=0)
            coded = np.clip(np.rint(unit * scale), -lim, lim).astype(np.float32)
            rec = []
            for q, want in zip(queries, truth, strict=True):
                qs = (q @ basis) / scale
                qq = np.rint(qs * (lim / np.abs(qs).max()))
                cand = np.argpartition(-(coded @ qq), cands + 100)[:cands + 100]
                best = cand[np.argpartition(-(full[cand] @ q) * inv[cand], 10)[:10]]
                rec.append(len(want & set(best.tolist())) / 10)
            print(f"bits {bits} candidates {cands}: recall@10 {np.mean(rec):.4f}")
    print("load", os.getloadavg())


def ivf(queries, truth, full, inv, basis, unit, lists, probes) -> None:  # type: ignore[no-untyped-def]
    """The inverted-file stage (see the module docstring)."""
    rng = np.random.default_rng(0)
    n = len(inv)
    cent = unit[rng.choice(n, lists, replace=False)].copy()
    sample = unit[rng.choice(n, 100_000, replace=False)]
    for _ in range(10):
        near = np.argmax(sample @ cent.T, axis=1)
        for c in range(lists):
            if (near == c).any():
                cent[c] = sample[near == c].mean(axis=0)
        cent /= np.linalg.norm(cent, axis=1, keepdims=True) + 1e-12
    owner = np.concatenate([np.argmax(unit[i:i + 50_000] @ cent.T, axis=1)
                            for i in range(0, n, 50_000)])
    order = np.argsort(owner, kind="stable")
    starts = np.searchsorted(owner[order], np.arange(lists + 1))
    by_list = unit[order]
    with threadpool_limits(1):
        for nprobe in probes:
            rec, cpu = [], []
            for q, want in zip(queries, truth, strict=True):
                t = time.thread_time()
                qr = q @ basis
                top = np.argpartition(-(cent @ qr), nprobe)[:nprobe]
                rows = np.concatenate([np.arange(starts[c], starts[c + 1]) for c in top])
                s = by_list[rows] @ qr
                k = min(1100, len(rows))
                cand = order[rows[np.argpartition(-s, k - 1)[:k]]]
                best = cand[np.argpartition(-(full[cand] @ q) * inv[cand], 10)[:10]]
                cpu.append(time.thread_time() - t)
                rec.append(len(want & set(best.tolist())) / 10)
            print(f"lists {lists} nprobe {nprobe}: recall@10 {np.mean(rec):.4f} "
                  f"cpu p50 {np.median(cpu) * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
