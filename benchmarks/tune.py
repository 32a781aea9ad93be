"""Tune fusion on a training split: RRF k, arm weights, candidate depth, stop words.

Run as ``python -m octomem.benchmarks.tune DATASET_DIR --split train --out DIR``. Each
arm's run is fetched once per training query, at the largest candidate depth of the
grid, straight from the assembled arms; every grid point then re-fuses those runs with
the engine's own :mod:`~octomem.engine.fusion` functions (so the simulation is the
pipeline's fusion, minus rerank and dedup) and ranx scores it on the split's qrels.
Only the training split is read: report the chosen values on ``test`` with ``octomem
bench``. Writes ``tuning.json`` and ``tuning.md`` to ``--out``.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from ranx import Qrels, evaluate

from octomem.engine.fusion import reciprocal_rank_fusion, weighted_score_fusion
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Filters, Run

from .arguments import beir_folder, bench_parser, run_main
from .cache import IndexCache
from .command import bench_registry, progress_bars
from .dataset import BeirDataset, load_dataset, query_filters
from .metrics import ranx_run

#: The grid. RRF k spans Cormack et al.'s k=60 and the small k that rank-fusion studies
#: found better for two-arm hybrids (Bruch, Gai & Ingber, "An Analysis of Fusion Functions
#: for Hybrid Retrieval", ACM TOIS 2023); weights are the semantic arm's relative to 1.0
#: for the keyword arm.
RRF_KS = (1, 2, 5, 10, 20, 30, 40, 60, 80, 100)
SEMANTIC_WEIGHTS = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0)
CANDIDATE_KS = (20, 50, 100, 200)
#: Documents kept per fused answer when scoring (recall@100 needs 100).
ANSWER_DEPTH = 100
METRIC = "ndcg@10"


def fetch_runs(
    pipeline: Pipeline, dataset: BeirDataset, filters: dict[str, Filters], depth: int, advance: Any
) -> tuple[dict[str, Run], dict[str, Run]]:
    """Return each query's keyword run and semantic run at ``depth`` (chunk level)."""
    keyword, semantic, embedder = (
        pipeline.arms.keyword,
        pipeline.arms.semantic,
        pipeline.arms.embedder,
    )
    kw: dict[str, Run] = {}
    sem: dict[str, Run] = {}
    for qid, text in dataset.queries.items():
        kw[qid] = keyword.search(text, filters[qid], depth)
        sem[qid] = semantic.search(embedder.embed_query(text), filters[qid], depth)
        advance(1)
    return kw, sem


def _docs(fused: list[Any], doc_of: dict[int, str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for entry in fused:
        doc = doc_of[entry.chunk_id]
        if doc not in out:
            out[doc] = float(ANSWER_DEPTH - len(out))
            if len(out) == ANSWER_DEPTH:
                break
    return out


def score(
    qrels: dict[str, dict[str, int]],
    kw: dict[str, Run],
    sem: dict[str, Run],
    doc_of: dict[int, str],
    fusion: str,
    k: int,
    weights: dict[str, float],
    candidate_k: int,
) -> dict[str, float]:
    """Fuse each query's two runs cut at ``candidate_k`` and return ranx's mean metrics."""
    run: dict[str, dict[str, float]] = {}
    for qid in qrels:
        runs = [kw[qid][:candidate_k], sem[qid][:candidate_k]]
        fused = (
            weighted_score_fusion(runs, weights)
            if fusion == "weighted"
            else reciprocal_rank_fusion(runs, k, weights)
        )
        run[qid] = _docs(fused, doc_of)
    queries = sorted(qrels)
    result = evaluate(
        Qrels({q: dict(d) for q, d in qrels.items()}),
        ranx_run(run, queries, "grid"),
        [METRIC, "recall@100"],
    )
    return {m: float(v) for m, v in result.items()}


def grid(
    qrels: dict[str, dict[str, int]],
    kw: dict[str, Run],
    sem: dict[str, Run],
    doc_of: dict[int, str],
    names: tuple[str, str],
) -> list[dict[str, Any]]:
    """Score every grid point; return rows sorted best first by :data:`METRIC`."""
    rows = []
    points = [
        ("rrf", k, w, c) for k, w, c in itertools.product(RRF_KS, SEMANTIC_WEIGHTS, CANDIDATE_KS)
    ]
    points += [("weighted", 0, w, c) for w, c in itertools.product(SEMANTIC_WEIGHTS, CANDIDATE_KS)]
    for fusion, k, w, c in points:
        weights = {names[0]: 1.0, names[1]: w}
        metrics = score(qrels, kw, sem, doc_of, fusion, k or 60, weights, c)
        rows.append(
            {
                "fusion": fusion,
                "rrf_k": k or None,
                "semantic_weight": w,
                "candidate_k": c,
                **metrics,
            }
        )
    rows.sort(key=lambda r: -r[METRIC])
    return rows


def tune(
    dataset_dir: Path,
    split: str,
    out: Path,
    cache_dir: Path | None,
    keyword: str = "fts5",
    semantic: str = "sqlite-vec",
    embedder: str = "fastembed",
) -> dict[str, Any]:
    """Fetch runs on ``split``, score the grid (stop words on and off), write the results."""
    registry = bench_registry()
    dataset = load_dataset(dataset_dir, split)
    filters = query_filters(dataset, None)
    result: dict[str, Any] = {
        "dataset": dataset.name,
        "split": split,
        "queries": len(dataset.queries),
        "keyword": keyword,
        "semantic": semantic,
        "embedder": embedder,
        "metric": METRIC,
    }

    def settings_for(extra: dict[str, Any], base: dict[str, Any] | None = None) -> Any:
        from .command import deep_merge

        return load_settings(None, deep_merge(base or {}, extra), read_user_config=False)

    with progress_bars(_console()) as progress:
        for stopwords in (True, False):
            base = {"arms": {keyword: {"stopwords": stopwords}}} if keyword == "fts5" else {}
            cache = IndexCache(
                dataset, registry, lambda e, b=base: settings_for(e, b), cache_dir, progress
            )
            entry = cache.entry(embedder)
            cache.ensure_keyword(entry, keyword)
            cache.ensure_semantic(entry, semantic, embedder)
            pipeline = Pipeline(
                settings_for(
                    {
                        "pipeline": {
                            "keyword": keyword,
                            "semantic": semantic,
                            "embedder": embedder,
                            "dedup": None,
                        }
                    },
                    base,
                ),
                registry,
                entry.root,
            )
            try:
                doc_of = {c.id: c.document_id for c in pipeline.arms.storage.iter_chunks()}
                kw, sem = fetch_runs(
                    pipeline,
                    dataset,
                    filters,
                    max(CANDIDATE_KS),
                    progress(f"{split} runs (stopwords={stopwords})", len(dataset.queries)),
                )
            finally:
                pipeline.close()
            rows = grid(dataset.qrels, kw, sem, doc_of, (keyword, semantic))
            result[f"stopwords={stopwords}"] = rows
    write(result, out)
    return result


def _console() -> Any:
    from rich.console import Console

    return Console(stderr=True)


#: A k within this much train nDCG@10 of the best counts as equally good (the standard
#: error of a mean nDCG@10 over SciFact's 809 train queries is ~0.013, 6x larger).
TOLERANCE = 0.002


def _pick(rows: list[dict[str, Any]], **match: Any) -> dict[str, Any]:
    return next(r for r in rows if all(r[k] == v for k, v in match.items()))


def choose_rrf_k(rows: list[dict[str, Any]], tolerance: float = TOLERANCE) -> int:
    """Return the largest RRF k whose nDCG@10 (equal weights, candidate_k=100) is within
    ``tolerance`` of the best k's: the flattest rank discount that loses nothing."""
    scores = {
        k: _pick(rows, fusion="rrf", rrf_k=k, semantic_weight=1.0, candidate_k=100)[METRIC]
        for k in RRF_KS
    }
    best = max(scores.values())
    return max(k for k, v in scores.items() if v >= best - tolerance)


def _table(head: list[str], body: list[list[str]]) -> list[str]:
    return [
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        *("| " + " | ".join(row) + " |" for row in body),
        "",
    ]


def summary(result: dict[str, Any]) -> list[str]:
    """Return the Markdown tables of ``tuning.md``: RRF by k, weights, depth, top points."""
    on, off = result["stopwords=True"], result["stopwords=False"]
    chosen = choose_rrf_k(on)
    eq = {"semantic_weight": 1.0, "candidate_k": 100}
    by_k = []
    for k in RRF_KS:
        rows = [
            r for r in on if r["fusion"] == "rrf" and r["rrf_k"] == k and r["candidate_k"] == 100
        ]
        best = max(rows, key=lambda r: r[METRIC])
        by_k.append(
            [
                str(k),
                f"{_pick(on, fusion='rrf', rrf_k=k, **eq)[METRIC]:.4f}",
                f"{_pick(off, fusion='rrf', rrf_k=k, **eq)[METRIC]:.4f}",
                f"{best[METRIC]:.4f} (w={best['semantic_weight']})",
            ]
        )
    weights = [
        [str(w), f"{_pick(on, fusion='weighted', semantic_weight=w, candidate_k=100)[METRIC]:.4f}"]
        for w in SEMANTIC_WEIGHTS
    ]
    depth = [
        [
            str(c),
            *(
                f"{_pick(on, fusion=f, rrf_k=k, semantic_weight=1.0, candidate_k=c)[m]:.4f}"
                for f, k in (("rrf", 60), ("rrf", chosen), ("weighted", None))
                for m in (METRIC, "recall@100")
            ),
        ]
        for c in CANDIDATE_KS
    ]
    top = [
        [
            r["fusion"],
            str(r["rrf_k"] or "—"),
            str(r["semantic_weight"]),
            str(r["candidate_k"]),
            f"{r[METRIC]:.4f}",
            f"{r['recall@100']:.4f}",
        ]
        for r in on[:10]
    ]
    return [
        "## RRF by k (equal weights, candidate_k=100)",
        "",
        *_table(
            ["rrf_k", "nDCG@10 (stop words dropped)", "nDCG@10 (kept)", "best semantic weight"],
            by_k,
        ),
        "## Weighted score fusion by semantic weight (keyword 1.0, candidate_k=100)",
        "",
        *_table(["semantic weight", "nDCG@10"], weights),
        "## Candidate depth (equal weights)",
        "",
        *_table(
            [
                "candidate_k",
                "RRF k=60 nDCG@10",
                "R@100",
                f"RRF k={chosen} nDCG@10",
                "R@100",
                "weighted nDCG@10",
                "R@100",
            ],
            depth,
        ),
        "## Best 10 grid points (stop words dropped)",
        "",
        *_table(["fusion", "rrf_k", "semantic weight", "candidate_k", "nDCG@10", "R@100"], top),
    ]


def write(result: dict[str, Any], out: Path) -> None:
    """Write ``tuning.json`` and a Markdown summary ``tuning.md`` into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    result["chosen_rrf_k"] = choose_rrf_k(result["stopwords=True"])
    (out / "tuning.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    lines = [
        f"# Fusion tuning on {result['dataset']} `{result['split']}` ({result['queries']} queries)",
        "",
        f"Arms: `{result['keyword']}` + `{result['semantic']}` ({result['embedder']}); metric "
        f"{result['metric']} by ranx. Written by `python -m octomem.benchmarks.tune`.",
        "",
        f"Chosen: `retrieval.rrf_k = {result['chosen_rrf_k']}` (the largest k within "
        f"{TOLERANCE} nDCG@10 of the best k, equal weights, candidate_k=100); weights, "
        "candidate_k and the fts5 stop words stay as they are (their best values gain less "
        f"than {TOLERANCE} over the defaults, or nothing).",
        "",
        *summary(result),
    ]
    (out / "tuning.md").write_text("\n".join(lines), encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    """Command line: ``python -m octomem.benchmarks.tune DATASET_DIR [--split train] --out DIR``."""
    parser = bench_parser("tune", __doc__, description=__doc__)
    parser.add_argument("dataset", type=beir_folder, help="a BEIR folder")
    parser.add_argument("--split", default="train")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--cache-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    tune(args.dataset, args.split, args.out, args.cache_dir)


if __name__ == "__main__":
    run_main(main, "python -m octomem.benchmarks.tune")
