"""The scale curve: build time and query latency per arm at growing synthetic sizes.

``octomem bench --synthetic 10k,100k,1M [--corpus random|realistic]`` writes a BEIR
folder per size (:mod:`~octomem.benchmarks.scale_corpus`: random texts and vectors, or
real MiniLM vectors of SciFact and LoCoMo texts), builds it through the same cache as
real datasets, and times every row of :data:`ROWS` at ``top_k`` 10. Next to each
semantic row it reports the memory-bandwidth floor of an exact scan (bytes of stored
vectors / measured read bandwidth), the arm's p50 over that floor, its recall@10 against
an exact float search over the same vectors (:mod:`~octomem.benchmarks.exact`), and a
numpy flat scan (``vectors @ q`` + ``argpartition``). A row is skipped at a size when its
time at the previous size, scaled linearly, would exceed :data:`BUDGET_S`, or its memory
growth would exceed half the RAM.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

from octomem.engine.arms import ArmContext
from octomem.engine.assembly import arm_options
from octomem.engine.errors import OctomemError
from octomem.engine.manager import ArmRegistry, load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings

from . import baseline, peers, realistic_data, synthetic_data
from .cache import IDS_FILE, VECTORS_FILE, CacheEntry, IndexCache, default_cache_dir
from .combos import Combo, parse_combo
from .command import deep_merge, machine, progress_bars
from .dataset import BeirDataset, load_dataset, query_filters
from .exact import exact_top_k, recall_at_k
from .runner import ComboResult, rss_bytes, run_combo
from .scale_corpus import CORPORA, RANDOM, REALISTIC, ScaleCorpus, random_corpus, realistic_corpus

#: The curve's rows, ``NAME=arm+arm+...`` (:mod:`~octomem.benchmarks.combos`). Semantic
#: rows name no embedder: the corpus's own is used (``synthetic`` for the random corpus,
#: ``pipeline.embedder`` for the realistic one). A row with a setting override is one
#: more line, e.g. ``"sqlite-vec-vec0=sqlite-vec+arms.sqlite-vec.scan=vec0"``.
ROWS = (
    "grep=grep",
    # the default: ranked from the in-RAM postings once warmed (the runner warms every arm)
    "fts5=fts5",
    "fts5-disk=fts5+arms.fts5.in_ram=off",  # before: FTS5's own ranking
    "rank-bm25=rank-bm25",
    # the default: an exact numpy scan below 50k vectors, projection + exact re-scoring above
    "sqlite-vec=sqlite-vec",
    "sqlite-vec-exact=sqlite-vec+arms.sqlite-vec.approximate_above=1000000000",
    "sqlite-vec-vec0=sqlite-vec+arms.sqlite-vec.scan=vec0",  # before: sqlite-vec's own KNN
    # what an agent's recall runs: query embedding, both arms, RRF, cosine dedup
    "hybrid=fts5+sqlite-vec+rrf+cosine",
    # the same with an exact vector scan at every size (the default below approximate_above)
    "hybrid-exact=fts5+sqlite-vec+rrf+cosine+arms.sqlite-vec.approximate_above=1000000000",
    # before: both arms on their on-disk indexes (vec0's KNN, FTS5's ranking)
    "hybrid-disk=fts5+sqlite-vec+rrf+cosine+arms.sqlite-vec.scan=vec0+arms.fts5.in_ram=off",
)
#: Projected seconds (build + queries) above which a row is skipped at the next size.
BUDGET_S = 900.0
TOP_K = 10
#: Where ``scifact/`` and ``locomo/`` are read from when ``--sources`` is not given
#: (relative to the working directory, as in docs/benchmarks.md's commands).
DEFAULT_SOURCES = Path("../shared/data")
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$")


def parse_sizes(text: str) -> list[int]:
    """Turn ``"10k,100k,1M"`` into ``[10000, 100000, 1000000]`` (ascending, distinct).

    :raises OctomemError: a size is not a positive number with an optional k/M suffix.
    """
    sizes = []
    for part in text.split(","):
        match = _SIZE.match(part)
        if not match:
            raise OctomemError(f"--synthetic {text!r}: {part!r} is not a size like 10k or 1M")
        value = float(match.group(1)) * {"": 1, "k": 1e3, "m": 1e6}[match.group(2).lower()]
        if value < 1:
            raise OctomemError(f"--synthetic {text!r}: sizes must be >= 1")
        sizes.append(int(value))
    return sorted(set(sizes))


def queries_for(size: int) -> int:
    """Return how many queries are timed at ``size`` documents (fewer at large sizes)."""
    return 100 if size <= 100_000 else 30


def measure_bandwidth(n_bytes: int = 1 << 30, repeats: int = 5) -> dict[str, float]:
    """Measure memory read bandwidth with numpy (bytes/s), on an array larger than caches.

    Two readers of a ``n_bytes`` float32 array: ``np.add.reduce`` over it, and a
    384-column ``matrix @ vector`` (BLAS sgemv, what an exact scan does); the best of
    ``repeats`` runs of each. :returns: ``{"sum": B/s, "sgemv": B/s, "best": B/s}``.
    """
    rows = n_bytes // (4 * synthetic_data.DIM)
    data = np.ones(rows * synthetic_data.DIM, dtype=np.float32)
    matrix = data.reshape(rows, synthetic_data.DIM)
    vector = np.ones(synthetic_data.DIM, dtype=np.float32)
    out: dict[str, float] = {}
    for name, fn in (("sum", lambda: np.add.reduce(data)), ("sgemv", lambda: matrix @ vector)):
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - start)
        out[name] = data.nbytes / best
    out["best"] = max(out["sum"], out["sgemv"])
    return out


def best_bandwidth(previous: dict[str, float] | None = None) -> dict[str, float]:
    """Measure again and keep, per reader, the best seen: other work on the machine only
    ever lowers a measurement, so the highest is the closest to the hardware's."""
    now = measure_bandwidth()
    if previous:
        now = {k: max(v, previous.get(k, 0.0)) for k, v in now.items()}
    return now


def set_floors(result: dict[str, Any]) -> None:
    """Set each size's ``floor_ms`` (its vector bytes / the best measured bandwidth) and
    each semantic row's ``floor_ratio`` (its semantic arm's p50 / ``floor_ms``)."""
    best = result["bandwidth_bytes_per_s"]["best"]
    for size in result["sizes"]:
        size["floor_ms"] = size["vector_bytes"] / best * 1e3
        for row in size["rows"].values():
            p50 = row.get("latency", {}).get(row.get("semantic") or "", {}).get("p50_ms")
            if p50 is not None:
                row["floor_ratio"] = p50 / size["floor_ms"]


def numpy_scan_ms(vectors: np.ndarray, n_queries: int = 20, k: int = 100) -> dict[str, float]:
    """Time an exact numpy scan: ``vectors @ q`` then ``argpartition`` for the top ``k`` (ms)."""
    rng = np.random.default_rng(0)
    vectors @ rng.standard_normal(vectors.shape[1]).astype(np.float32)  # warm-up (BLAS threads)
    times = []
    for _ in range(n_queries):
        q = rng.standard_normal(vectors.shape[1]).astype(np.float32)
        start = time.perf_counter()
        scores = vectors @ q
        np.argpartition(-scores, min(k, len(scores) - 1))[:k]
        times.append((time.perf_counter() - start) * 1e3)
    return {"p50_ms": float(np.percentile(times, 50)), "p95_ms": float(np.percentile(times, 95))}


def _summary(result: ComboResult, seconds: float, rss_growth: int) -> dict[str, Any]:
    stages = {
        s: {"p50_ms": result.percentile(s, 50), "p95_ms": result.percentile(s, 95)}
        for s in result.timings_ms
    }
    return {
        "latency": stages,
        "warmup_ms": result.warmup_ms,
        "seconds": seconds,
        "rss_growth_bytes": rss_growth,
        "index_bytes": result.index_bytes,
    }


def _skip_reason(previous: dict[str, Any] | None, ratio: float) -> str | None:
    if previous is None or "skipped" in previous:
        return previous["skipped"] if previous else None
    projected = previous["seconds"] * ratio  # warm-up and queries; shared builds are paid once
    if projected > BUDGET_S:
        return f"projected {projected:.0f} s > budget {BUDGET_S:.0f} s"
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if previous["rss_growth_bytes"] * ratio > ram / 2:
        grown = previous["rss_growth_bytes"] * ratio / 2**30
        return f"projected memory {grown:.1f} GiB > half the RAM"
    return None


def _ranked(run: dict[str, float]) -> list[str]:
    return [doc for doc, _ in sorted(run.items(), key=lambda item: -item[1])]


def semantic_recall(
    result: ComboResult,
    vectors: np.ndarray,
    entry: CacheEntry,
    cache: IndexCache,
    dataset: BeirDataset,
    embedder: Any,
) -> float:
    """Return the row's recall@10 against an exact float search of ``vectors``.

    Only for rows whose answer is the semantic arm's ranking (no keyword arm, no filter):
    the exact top 10 is ``vectors @ q`` over every stored chunk, ``q`` the row's
    embedder's query vector, mapped to documents as the row's answers are.

    :param vectors: ``(n_chunks, dim)`` float32, rows in ``entry``'s ``chunk_ids.npy`` order.
    """
    qids = list(dataset.queries)
    queries = np.stack([embedder.embed_query(dataset.queries[q]) for q in qids])
    top = exact_top_k(vectors, queries.astype(np.float32), TOP_K)
    chunk_ids = np.load(entry.root / IDS_FILE)[top]
    docs = cache.document_ids(entry, chunk_ids.ravel().tolist())
    exact = {q: [docs[int(c)] for c in row] for q, row in zip(qids, chunk_ids, strict=True)}
    return recall_at_k({q: _ranked(result.run.get(q, {})) for q in qids}, exact, TOP_K)


def _query_embedder(combo: Combo, settings_for: Any, registry: ArmRegistry, root: Path) -> Any:
    loaded = settings_for(combo.settings_overrides())
    spec = registry.get("embedder", combo.embedder)
    return spec.factory(arm_options(spec, loaded), ArmContext(root=root))


def _check_one_chunk(entry: CacheEntry, corpus: ScaleCorpus) -> None:
    stored = entry.steps["storage"]
    if corpus.precomputed and stored["documents"] != stored["chunks"]:
        raise OctomemError(
            f"{corpus.name} corpus: {stored['documents']} documents became {stored['chunks']} "
            f"chunks in {entry.root}; precomputed vectors need one chunk per document"
        )


def _run_rows(
    size: int,
    corpus: ScaleCorpus,
    cache: IndexCache,
    entry: CacheEntry,
    dataset: BeirDataset,
    ctx: dict[str, Any],
) -> dict[str, tuple[Combo, ComboResult | None, dict[str, Any]]]:
    settings_for, registry, progress = ctx["settings_for"], ctx["registry"], ctx["progress"]
    filters = query_filters(dataset, None)
    combos = [parse_combo(r, registry, settings_for({}).settings) for r in ctx["rows"]]
    out: dict[str, tuple[Combo, ComboResult | None, dict[str, Any]]] = {}
    for combo in combos:
        reason = _skip_reason(ctx["previous"].get(combo.name), ctx["ratio"])
        if reason:
            out[combo.name] = (combo, None, {"skipped": reason})
            continue
        if combo.keyword:
            cache.ensure_keyword(entry, combo.keyword)
        if combo.semantic and combo.embedder:
            precomputed = corpus.precomputed(dataset.folder) if corpus.precomputed else None
            cache.ensure_semantic(entry, combo.semantic, combo.embedder, precomputed)
        build = sum(
            entry.steps.get(s, {}).get("seconds", 0.0)
            for s in (f"keyword:{combo.keyword}", f"semantic:{combo.semantic}")
        )
        before, start = rss_bytes(), time.perf_counter()
        label = f"{size:,} docs: {combo.name}"
        result = run_combo(
            combo, entry, dataset, filters, settings_for, registry, TOP_K,
            progress=progress, label=label,
        )  # fmt: skip
        row = _summary(result, time.perf_counter() - start, result.rss_bytes - before)
        row.update(build_seconds=build, keyword=combo.keyword, semantic=combo.semantic)
        out[combo.name] = (combo, result, row)
    return out


def _one_size(size: int, corpus: ScaleCorpus, ctx: dict[str, Any]) -> dict[str, Any]:
    load_start = os.getloadavg()[0]
    dataset = load_dataset(corpus.write(size, queries_for(size)))
    cache = IndexCache(
        dataset, ctx["registry"], ctx["settings_for"], ctx["cache_dir"], ctx["progress"]
    )
    entry = cache.entry(corpus.embedder)
    _check_one_chunk(entry, corpus)
    ran = _run_rows(size, corpus, cache, entry, dataset, ctx)
    vectors = np.ascontiguousarray(np.load(entry.root / VECTORS_FILE, mmap_mode="r"))
    embedders: dict[str, Any] = {}
    for combo, result, row in ran.values():
        if result is None or not combo.semantic or combo.keyword:
            continue
        assert combo.embedder is not None
        if combo.embedder not in embedders:
            embedders[combo.embedder] = _query_embedder(
                combo, ctx["settings_for"], ctx["registry"], ctx["cache_dir"]
            )
        emb = embedders[combo.embedder]
        row["recall_at_10_vs_exact"] = semantic_recall(result, vectors, entry, cache, dataset, emb)
    return {
        "docs": size,
        "queries": len(dataset.queries),
        "peers": _peers(corpus, ran, entry, dataset, ctx),
        "build": entry.steps,
        "rows": {name: row for name, (_, _, row) in ran.items()},
        "vector_bytes": int(vectors.nbytes),
        "numpy_scan": numpy_scan_ms(vectors),
        "load_1m": {"start": load_start, "end": os.getloadavg()[0]},
    }


def _peers(
    corpus: ScaleCorpus, ran: dict[str, Any], entry: CacheEntry, dataset: BeirDataset,
    ctx: dict[str, Any],
) -> dict[str, Any] | None:
    """Time the peers (:mod:`~octomem.benchmarks.peers`) against the ``hybrid`` row's
    pipeline, interleaved; ``None`` for the random corpus (no filter groups, no meaning)
    or without a ``hybrid`` row."""
    if corpus.name != REALISTIC or "hybrid" not in ran or ran["hybrid"][1] is None:
        return None
    combo = ran["hybrid"][0]
    folder = dataset.corpus_path.parent
    vectors = np.load(folder / realistic_data.DOC_VECTORS, mmap_mode="r")
    texts = peers.read_corpus(dataset.corpus_path, vectors)
    pipeline = Pipeline(ctx["settings_for"](combo.settings_overrides()), ctx["registry"],
                        entry.root)
    try:
        pipeline.warm()
        return peers.run_peers(pipeline, texts, list(dataset.queries.values()),
                               entry.root.parent / f"{entry.root.name}-lance")
    finally:
        pipeline.close()


def run_scale_curve(
    sizes_text: str,
    out: Path,
    config_file: Path | None,
    overrides: dict[str, Any],
    console: Console | None,
    cache_dir: Path | None = None,
    corpus: str = RANDOM,
    sources: Path | None = None,
    rows: tuple[str, ...] = ROWS,
) -> dict[str, Any]:
    """Run every size in ``sizes_text`` on ``corpus``; write ``scale.{json,md,png}``
    (random) or ``scale-realistic.{json,md,png}`` (realistic) into ``out``.

    :param sources: folder holding ``scifact/`` and ``locomo/`` (realistic corpus only).
    :raises OctomemError: bad sizes, an unknown corpus, or missing sources.
    """
    sizes = parse_sizes(sizes_text)
    if corpus not in CORPORA:
        raise OctomemError(f"--corpus {corpus!r}: expected one of {', '.join(CORPORA)}")
    cache_dir = Path(cache_dir or default_cache_dir())
    registry = load_registry(extra_plugins=[baseline, synthetic_data])
    base = overrides
    if corpus == RANDOM:
        base = deep_merge(overrides, {"pipeline": {"embedder": "synthetic"}})

    def settings_for(extra: dict[str, Any]) -> Any:
        return load_settings(config_file, deep_merge(base, extra))

    bandwidth = measure_bandwidth()
    result: dict[str, Any] = {
        "corpus": corpus,
        "bandwidth_bytes_per_s": bandwidth,
        "machine": machine(),
        "top_k": TOP_K,
        "budget_s": BUDGET_S,
        "rows": list(rows),
        "sizes": [],
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }
    ctx: dict[str, Any] = {
        "registry": registry, "settings_for": settings_for, "cache_dir": cache_dir,
        "rows": rows, "previous": {}, "ratio": 1.0,
    }  # fmt: skip
    with progress_bars(console) as progress:
        ctx["progress"] = progress
        if corpus == RANDOM:
            chosen = random_corpus(cache_dir)
        else:
            where = Path(sources) if sources else DEFAULT_SOURCES
            chosen = realistic_corpus(cache_dir, where, registry, settings_for, progress)
        result["corpus_info"] = chosen.info
        for i, size in enumerate(sizes):
            ctx["ratio"] = size / sizes[i - 1] if i else 1.0
            done = _one_size(size, chosen, ctx)
            result["bandwidth_bytes_per_s"] = bandwidth = best_bandwidth(bandwidth)
            result["sizes"].append(done)
            set_floors(result)
            ctx["previous"] = done["rows"]
            _write(result, out)  # after every size, so a long run leaves partial results
    return result


def report_stem(corpus: str) -> str:
    """Return the report files' name without suffix: ``scale`` or ``scale-<corpus>``."""
    return "scale" if corpus == RANDOM else f"scale-{corpus}"


def _write(result: dict[str, Any], out: Path) -> None:
    from .synthetic_report import scale_markdown, scale_plot

    stem = report_stem(result["corpus"])
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stem}.json").write_text(
        json.dumps(result, indent=1, default=float) + "\n", encoding="utf-8"
    )
    (out / f"{stem}.md").write_text(scale_markdown(result, f"{stem}.png"), encoding="utf-8")
    scale_plot(result, out / f"{stem}.png")
