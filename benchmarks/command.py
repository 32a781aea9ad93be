"""``octomem bench``: build the cache, run every combination, evaluate, write the report."""

from __future__ import annotations

import os
import platform
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from octomem.engine.cli.progress import LineProgress
from octomem.engine.errors import OctomemError
from octomem.engine.manager import ArmRegistry, load_registry
from octomem.engine.settings import LoadedSettings, load_settings
from octomem.engine.types import Filters

from . import baseline, subsets
from .cache import IndexCache, ProgressFor
from .combos import Combo, default_combos, parse_combo
from .dataset import BeirDataset, load_dataset, query_filters
from .metrics import METRICS, Evaluation, best_of, evaluate_runs, ranx_compiled
from .runner import ComboResult, run_combo
from .smoke import describe, held_groups, smoke_subset, with_subset
from .subsets import filter_queries, other_group_filters

#: Hits asked per query in the quality pass: recall@100 needs a 100-deep ranking.
DEFAULT_TOP_K = 100
#: Hits asked per query in the latency pass: what an agent typically asks for.
LATENCY_TOP_K = 10
#: Queries timed in the latency pass (spread over the split).
LATENCY_QUERIES = 300
#: ``--combo`` value that stands for the default rows.
DEFAULTS = "defaults"


@dataclass(slots=True)
class BenchResult:
    """Everything one ``octomem bench`` run measured (what the report is written from)."""

    dataset: BeirDataset
    group_by: str | None
    top_k: int
    latency_top_k: int
    combos: list[ComboResult]
    evaluation: Evaluation
    build: dict[str, Any]
    command: str
    seconds: float
    load: dict[str, float] = field(default_factory=dict)
    query_filter: str | None = None


def deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """Return ``base`` with ``extra`` merged in, nested dicts merged key by key."""
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def bench_registry() -> ArmRegistry:
    """Return the installed arms plus the in-process ``grep`` baseline."""
    return load_registry(extra_plugins=[baseline])


@contextmanager
def progress_bars(console: Console | None) -> Iterator[ProgressFor]:
    """Yield ``progress(label, total) -> advance(n)``: rich progress bars at a terminal,
    progress lines otherwise (:class:`~octomem.engine.cli.progress.LineProgress`). A
    ``total`` of ``None`` is a phase whose work is not counted: the first ``advance``
    ends it."""
    if console is None:
        yield lambda label, total: lambda n: None
        return
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    bars: Any = (Progress(*columns, console=console, transient=False)
                 if console.is_terminal else LineProgress(console))
    with bars as bar:

        def progress(label: str, total: int | None) -> Callable[[int], None]:
            task = bar.add_task(label, total=total)
            if total is None:
                return lambda n: bar.update(task, total=1, completed=1)
            return lambda n: bar.advance(task, n)

        yield progress


def used_steps(combos: list[Combo]) -> set[str]:
    """Return the cache build steps ``combos`` read: storage, each keyword arm's index, the
    vectors and each semantic arm's index (a cache entry may hold others, built for
    earlier runs)."""
    steps = {"storage"}
    for combo in combos:
        if combo.keyword:
            steps.add(f"keyword:{combo.keyword}")
        if combo.semantic and combo.embedder:
            steps |= {"vectors", f"semantic:{combo.semantic}"}
    return steps


def resolve_combos(
    specs: list[str] | None, registry: ArmRegistry, loaded: LoadedSettings
) -> list[Combo]:
    """Parse ``--combo`` values; the value ``defaults`` (and no value at all) stands for
    the default rows (:func:`~octomem.benchmarks.combos.default_combos`).

    :raises OctomemError: a bad combination, or two rows with the same name.
    """
    settings = loaded.settings
    combos: list[Combo] = []
    for spec in specs or [DEFAULTS]:
        if spec.strip() == DEFAULTS:
            combos += default_combos(registry, settings)
        else:
            combos.append(parse_combo(spec, registry, settings))
    names = [c.name for c in combos]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise OctomemError(f"--combo: row names must be unique, repeated: {', '.join(dupes)}")
    if not combos:
        raise OctomemError("no combination to run: no keyword or semantic arm is installed")
    return combos


def _limit(dataset: BeirDataset, limit: int | None) -> BeirDataset:
    if not limit:
        return dataset
    keep = list(dataset.queries)[:limit]
    return BeirDataset(
        folder=dataset.folder,
        name=dataset.name,
        split=dataset.split,
        queries={q: dataset.queries[q] for q in keep},
        query_metadata={q: dataset.query_metadata[q] for q in keep},
        qrels={q: dataset.qrels[q] for q in keep},
        corpus_sha256=dataset.corpus_sha256,
        corpus_path=dataset.corpus_path,
    )


def _others_filters(dataset: BeirDataset, group_by: str | None, abstention: bool,
                    spec: str | None) -> tuple[dict[str, list[Filters]] | None, int | None]:
    """Return ``--abstention-groups``'s filters per query and its count (``None``: all).

    :raises OctomemError: given without ``--abstention`` and ``--group-by``, or malformed.
    """
    if spec is None:
        return None, None
    if not abstention or not group_by:
        raise OctomemError("--abstention-groups widens the abstention pass's other-group asks: "
                           "give it with --abstention and --group-by metadata.FIELD")
    count = subsets.parse_abstention_groups(spec)
    return (subsets.other_groups_filters(dataset, group_by, count,
                                         held_groups(dataset, group_by)), count)


def run_bench(
    dataset_dir: Path,
    combo_specs: list[str] | None = None,
    *,
    split: str = "test",
    group_by: str | None = None,
    top_k: int = DEFAULT_TOP_K,
    cache_dir: Path | None = None,
    config_file: Path | None = None,
    overrides: dict[str, Any] | None = None,
    limit: int | None = None,
    console: Console | None = None,
    registry: ArmRegistry | None = None,
    query_filter: str | None = None,
    abstention: bool = False,
    abstention_groups: str | None = None,
) -> BenchResult:
    """Measure every combination on one split of a BEIR folder.

    :param combo_specs: ``NAME=arm+arm+...`` values; ``None`` for the default rows.
    :param group_by: ``metadata.FIELD``: each query only sees documents with its value.
    :param limit: evaluate only the first ``limit`` judged queries (smoke runs).
    :param query_filter: ``metadata.FIELD=v1,v2``: evaluate only those queries
        (:func:`~.subsets.filter_queries`).
    :param abstention: also ask each query where nothing answers it: of another group's
        memory with ``group_by``, else of the store without its relevant documents
        (:func:`~.subsets.abstention`).
    :param abstention_groups: with ``abstention`` and ``group_by``, also ask each query of
        that many other groups, or ``all`` of them (:func:`~.subsets.other_groups_filters`).
    :raises OctomemError: bad folder, split, combination or settings, or
        ``abstention_groups`` without ``abstention`` and ``group_by`` or not ``all`` / N >= 1.
    """
    started = time.perf_counter()
    load_start = os.getloadavg()[0]
    registry = registry or bench_registry()
    overrides = overrides or {}

    def settings_for(extra: dict[str, Any]) -> LoadedSettings:
        return load_settings(config_file, deep_merge(overrides, extra))

    whole = load_dataset(dataset_dir, split)
    dataset = _limit(filter_queries(whole, query_filter), limit)
    filters = query_filters(dataset, group_by)
    if limit:  # a smoke run: index only what the kept queries can need (and say so)
        dataset = with_subset(dataset, smoke_subset(dataset, filters))
        if console is not None:
            console.print(f"--limit {limit}: {describe(dataset.extra['subset'])}",
                          highlight=False)
    other = other_group_filters(dataset, group_by, whole, held_groups(dataset, group_by)) \
        if abstention and group_by else None
    others, count = _others_filters(dataset, group_by, abstention, abstention_groups)

    def measure(pipeline: Any, run: dict[str, dict[str, float]]) -> dict[str, Any]:
        return subsets.abstention(pipeline, dataset, filters, other, run, others, count)
    combos = resolve_combos(combo_specs, registry, settings_for({}))
    results: list[ComboResult] = []
    build: dict[str, Any] = {}
    with progress_bars(console) as progress:
        cache = IndexCache(dataset, registry, settings_for, cache_dir, progress)
        entries = {}
        for combo in combos:
            entry = entries.get(combo.chunker) or cache.entry(combo.chunker)
            entries[combo.chunker] = entry
            if combo.keyword:
                cache.ensure_keyword(entry, combo.keyword)
            if combo.semantic and combo.embedder:
                cache.ensure_semantic(entry, combo.semantic, combo.embedder)
        for chunker, entry in entries.items():  # the steps this run's rows read, no others
            used = used_steps([c for c in combos if c.chunker == chunker])
            build[chunker or "words"] = {
                "root": str(entry.root),
                "key": entry.key,
                "steps": {k: v for k, v in entry.steps.items() if k in used},
            }
        for combo in combos:
            results.append(
                run_combo(
                    combo,
                    entries[combo.chunker],
                    dataset,
                    filters,
                    settings_for,
                    registry,
                    top_k,
                    latency_top_k=LATENCY_TOP_K,
                    latency_queries=LATENCY_QUERIES,
                    after=measure if abstention else None,
                    progress=progress,
                )
            )
        runs = {r.combo.name: r.run for r in results}
        first_use = "" if ranx_compiled() else (
            "; first use here: numba compiles ranx's code once per install, about 85 s of "
            "CPU, minutes on a busy machine; cached after")
        done = progress(f"evaluating {len(runs)} rows (ranx: {', '.join(METRICS)}; paired "
                        f"t-tests{first_use})", None)
        single = [r.combo.name for r in results if r.combo.single_arm]
        first = evaluate_runs(dataset.qrels, runs, None)
        best = best_of(first.scores, single)
        evaluation = evaluate_runs(dataset.qrels, runs, best) if best else first
        done(1)
    return BenchResult(
        dataset=dataset,
        group_by=group_by,
        top_k=top_k,
        latency_top_k=LATENCY_TOP_K,
        combos=results,
        evaluation=evaluation,
        build=build,
        command=" ".join(["octomem", *sys.argv[1:]]) if sys.argv else "",
        seconds=time.perf_counter() - started,
        load={"start_1m": load_start, "end_1m": os.getloadavg()[0]},
        query_filter=query_filter,
    )


def machine() -> dict[str, Any]:
    """Return what the numbers depend on: CPU count, platform, Python."""
    return {
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "processor": platform.processor(),
    }
