"""``octomem bench``: arm combinations measured on a BEIR folder, or the scale curve.

The benchmark runner (``octomem.benchmarks``) and its extra's libraries (ranx, matplotlib,
rank-bm25) are imported by name when the command runs: ``octomem --help`` stays light.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Annotated

import typer

from ..errors import OctomemError
from .commands import console, state
from .lazy import registry
from .options import Command


@registry.command(cls=Command)
def bench(
    dataset: Annotated[Path | None, typer.Argument(
        help="A BEIR folder (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv).")] = None,
    combo: Annotated[list[str] | None, typer.Option(
        "--combo", help=(
            "`NAME=arm+arm+...` (e.g. `hybrid=fts5+sqlite-vec`), or `defaults` for the default "
            "rows; repeatable. Default: the default rows (every keyword arm alone, the semantic "
            "arm alone, the hybrids)."))] = None,
    split: Annotated[str, typer.Option(help="Which qrels/SPLIT.tsv to evaluate on.")] = "test",
    group_by: Annotated[str | None, typer.Option(
        "--group-by", help=(
            "`metadata.FIELD`: a query only sees documents with its own value (LoCoMo: "
            "metadata.conv_id)."))] = None,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Report folder (default ./octomem-bench/DATASET).")] = None,
    top_k: Annotated[int, typer.Option(
        "--top-k", help="Hits per query (100: recall@100 needs it).")] = 100,
    cache_dir: Annotated[Path | None, typer.Option(
        "--cache-dir", help="Where built indexes and vectors are kept for reuse.")] = None,
    limit: Annotated[int | None, typer.Option(
        "--limit", help=(
            "A smoke run: the first N judged queries, an index of their documents plus 1,000 drawn "
            "at random."))] = None,
    synthetic: Annotated[str | None, typer.Option(
        "--synthetic", help="Scale curve instead of a dataset: sizes, e.g. `10k,100k,1M`.")] = None,
    corpus: Annotated[str, typer.Option(
        "--corpus", help=(
            "Scale curve corpus: `random` (Zipf pseudo-words, Gaussian vectors) or `realistic` "
            "(SciFact sentences and LoCoMo turns with real pipeline.embedder vectors, perturbed "
            "copies above ~31k; writes scale-realistic.*)."))] = "random",
    sources: Annotated[Path | None, typer.Option(
        "--sources", help=(
            "`--corpus realistic`: the folder holding the BEIR folders scifact/ and locomo/ (see "
            "docs/benchmarks.md)."))] = None,
    save_runs: Annotated[Path | None, typer.Option(
        "--save-runs", help="Write each row's TREC run file (DIR/ROW.trec).")] = None,
    query_filter: Annotated[str | None, typer.Option(
        "--query-filter", help=(
            "Only queries whose `metadata.FIELD` is one of the values: "
            "`metadata.conv_id=conv-44,conv-47`."))] = None,
    abstention: Annotated[bool, typer.Option(
        "--abstention", help=(
            "Also ask each query where nothing answers it: of another group's memory (with "
            "--group-by), else of the store without its relevant documents; share answered with no "
            "hits."))] = False,
    abstention_groups: Annotated[str | None, typer.Option(
        "--abstention-groups", help=(
            "With --abstention and --group-by: also ask each query of N other groups (the next "
            "N), or `all` of them, among the evaluated queries' groups; reported beside the "
            "one-group figure."))] = None,
) -> None:
    """Measure arm combinations on a BEIR folder: quality (ranx) and cost, side by side.

    Writes report.md, report.json and PNG plots to --out. Needs
    `pip install 'octomem[bench]'` (from a clone: `pip install -e '.[bench]'`).
    """
    try:
        entry = importlib.import_module("octomem.benchmarks.entry")
    except ImportError as exc:  # ranx, matplotlib, rank-bm25 come with the bench extra
        raise OctomemError(
            f"octomem bench needs the bench extra ({exc}): pip install 'octomem[bench]' "
            "(from a clone: pip install -e '.[bench]')") from exc
    entry.main(
        dataset=dataset, combos=combo, split=split, group_by=group_by, out=out, top_k=top_k,
        cache_dir=cache_dir, limit=limit, synthetic=synthetic, corpus=corpus, sources=sources,
        save_runs=save_runs, query_filter=query_filter, abstention=abstention,
        abstention_groups=abstention_groups,
        config_file=state.config,
        overrides=state.overrides, console=console,
    )
