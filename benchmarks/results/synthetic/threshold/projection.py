"""Projection vs exact scan on the realistic corpus's vectors: recall@10 and p50 per size.

What chose ``APPROXIMATE_ABOVE`` (``plugins/sqlite_vec/options.py``). Queries are SciFact
*train* claims (the tuning split), embedded by the bundled MiniLM; vectors are the
realistic corpus's cached base vectors (``octomem bench --synthetic ... --corpus
realistic`` writes them), extended by perturbed copies above the base size exactly as
``benchmarks/realistic_data.py`` does. Both scans run in one process, one BLAS thread.

    python benchmarks/results/synthetic/threshold/projection.py SIZE DIMS,.. CANDIDATES,.. \
        [--queries N] [--sources ../shared/data] [--cache ~/.cache/octomem/bench]

Prints one line per (dims, candidates): recall@10 vs exact, p50 and p95 ms, and the
exact scan's p50 first.
"""

from __future__ import annotations

import argparse
import glob
import json
import time
from pathlib import Path

import numpy as np

from octomem.benchmarks.realistic_data import SEED, perturb, sigma_for
from octomem.plugins.fastembed.embedder import FastembedEmbedder
from octomem.plugins.fastembed.options import FastembedOptions
from octomem.plugins.sqlite_vec.matrix import VectorMatrix


def train_claims(sources: Path, limit: int) -> np.ndarray:
    """The first ``limit`` SciFact train claims, embedded as queries: float32 ``(m, 384)``."""
    folder = sources / "scifact"
    lines = (folder / "qrels" / "train.tsv").read_text(encoding="utf-8").splitlines()[1:]
    qids = {line.split("\t")[0] for line in lines}
    claims = [json.loads(line) for line in (folder / "queries.jsonl").open(encoding="utf-8")]
    texts = [c["text"] for c in claims if c["_id"] in qids][:limit]
    embedder = FastembedEmbedder(FastembedOptions())
    return np.stack([embedder.embed_query(t) for t in texts]).astype(np.float32)


def corpus(cache: Path, n: int) -> np.ndarray:
    """``n`` realistic vectors: a seeded sample of the base, or the base plus copies."""
    base = np.load(sorted(glob.glob(str(cache / "realistic" / "base-*.npy")))[0])
    rng = np.random.default_rng(SEED)
    if n <= len(base):
        return base[np.sort(rng.choice(len(base), n, replace=False))]
    out = np.empty((n, base.shape[1]), np.float32)
    out[:len(base)] = base
    sigma = sigma_for(0.93, base.shape[1])
    for i in range(len(base), n, 50_000):
        j = min(i + 50_000, n)
        out[i:j] = perturb(base[rng.integers(0, len(base), j - i)], sigma, rng)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("size", type=float)
    ap.add_argument("dims")
    ap.add_argument("candidates")
    ap.add_argument("--queries", type=int, default=809)
    ap.add_argument("--sources", type=Path, default=Path("../shared/data"))
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache/octomem/bench")
    args = ap.parse_args()
    n = int(args.size)
    queries = train_claims(args.sources, args.queries)
    vectors = corpus(args.cache, n)
    truth = []
    for i in range(0, len(queries), 50):
        truth += [set(np.argpartition(-r, 10)[:10].tolist()) for r in queries[i:i + 50] @ vectors.T]
    ids = np.arange(n, dtype=np.int64)
    exact = VectorMatrix("t", vectors.shape[1], None)
    exact._append(ids, vectors)
    times = []
    for q in queries:
        start = time.perf_counter()
        exact.top_k(q, 10, None)
        times.append(time.perf_counter() - start)
    print(f"n={n} exact p50 {np.median(times) * 1e3:.2f} ms", flush=True)
    del exact
    for dims in (int(d) for d in args.dims.split(",")):
        matrix = VectorMatrix("t", vectors.shape[1], (1, dims, 1000))
        matrix._append(ids, vectors)
        matrix._projected(10, n)
        for cands in (int(c) for c in args.candidates.split(",")):
            matrix.reduce = (1, dims, cands)
            recall, times = [], []
            for qi, q in enumerate(queries):
                start = time.perf_counter()
                got = matrix.top_k(q, 10, None)
                times.append(time.perf_counter() - start)
                recall.append(len(truth[qi] & set(got.ids.tolist())) / 10)
            print(f"  dims={dims} candidates={cands} recall@10 {np.mean(recall):.4f} "
                  f"p50 {np.median(times) * 1e3:.2f} ms p95 {np.percentile(times, 95) * 1e3:.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
