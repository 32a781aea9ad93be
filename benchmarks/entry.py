"""What ``octomem bench`` calls: run a dataset (or the synthetic scale curve), write the report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from octomem.engine.cli.layout import emit, wrapped
from octomem.engine.errors import OctomemError

from .command import run_bench
from .report import write_report
from .summary import cells, table_lines


def main(
    *,
    dataset: Path | None,
    combos: list[str] | None,
    split: str,
    group_by: str | None,
    out: Path | None,
    top_k: int,
    cache_dir: Path | None,
    limit: int | None,
    synthetic: str | None,
    config_file: Path | None,
    overrides: dict[str, Any],
    console: Console,
    corpus: str = "random",
    sources: Path | None = None,
    save_runs: Path | None = None,
    query_filter: str | None = None,
    abstention: bool = False,
    abstention_groups: str | None = None,
) -> None:
    """Run ``octomem bench`` and print where the report went.

    :param corpus: the scale curve's corpus, ``random`` or ``realistic``.
    :param sources: folder holding ``scifact/`` and ``locomo/`` for ``realistic``.
    :param save_runs: write each row's TREC run file into this folder.
    :param query_filter: ``metadata.FIELD=v1,v2``: only those queries.
    :param abstention: also ask each query where nothing answers it: of another group's
        memory (with ``group_by``) or of the store without its relevant documents.
    :param abstention_groups: ``N`` or ``all``: also ask each query of that many other
        groups (:func:`~octomem.benchmarks.subsets.other_groups_filters`).
    :raises OctomemError: neither or both of ``dataset`` and ``synthetic``, ``--corpus``
        or ``--sources`` without ``--synthetic``, or any error of
        :func:`~octomem.benchmarks.command.run_bench`.
    """
    if dataset is None and synthetic is None:
        raise OctomemError("give a BEIR folder (corpus.jsonl, queries.jsonl, qrels/) to measure, "
                           "or --synthetic SIZES (e.g. 10k,100k) for the scale curve")
    if dataset is not None and synthetic is not None:
        raise OctomemError("give a BEIR folder, or --synthetic SIZES (e.g. 10k,100k), not both")
    if limit is not None and limit < 1:
        raise OctomemError(f"--limit: must be >= 1 (the first N judged queries), got {limit}")
    if synthetic is None and (corpus != "random" or sources is not None):
        raise OctomemError(
            "--corpus and --sources choose the scale curve's corpus: add --synthetic"
        )
    if synthetic is not None:
        from .synthetic import report_stem, run_scale_curve

        folder = out or Path("octomem-bench") / "synthetic"
        run_scale_curve(
            synthetic,
            folder,
            config_file,
            overrides,
            console,
            cache_dir=cache_dir,
            corpus=corpus,
            sources=sources,
        )
        stem = report_stem(corpus)
        console.print(f"report: {folder / (stem + '.md')}  (JSON {stem}.json, plot {stem}.png)")
        return
    assert dataset is not None
    if top_k < 1:
        raise OctomemError(f"--top-k must be >= 1, got {top_k}")
    result = run_bench(
        dataset,
        combos,
        split=split,
        group_by=group_by,
        top_k=top_k,
        cache_dir=cache_dir,
        config_file=config_file,
        overrides=overrides,
        limit=limit,
        console=console,
        query_filter=query_filter,
        abstention=abstention,
        abstention_groups=abstention_groups,
    )
    if save_runs is not None:
        from .subsets import save_runs as write_runs

        written = write_runs(save_runs, {r.combo.name: r.run for r in result.combos})
        console.print(f"runs: {', '.join(str(p) for p in written)}")
    folder = out or Path("octomem-bench") / result.dataset.name
    emit(console, wrapped(f"writing the report and its plots to {folder} ...", console.width))
    paths = write_report(result, folder)
    title = (f"{result.dataset.name} ({split}, {len(result.dataset.queries)} queries; "
             "p vs best: paired t-test of nDCG@10 against the best single arm)")
    emit(console, [""] + wrapped(title, console.width), style="bold")
    emit(console, table_lines("", cells(result), console.width)[1:])
    emit(console, wrapped(f"report: {paths['markdown']} (JSON {paths['json'].name}, plots "
                          f"{paths['quality_plot'].name}, {paths['latency_plot'].name})",
                          console.width, "  ", first=""))
