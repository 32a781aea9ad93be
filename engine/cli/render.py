"""Rich rendering of CLI output: answers, reports, plugin and settings tables."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.padding import Padding
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from ..manager import ArmRegistry
from ..pipeline import AddReport
from ..settings import LoadedSettings, setting_field, setting_group
from .progress import LineProgress
from .values import toml_value

ARM_KIND_ORDER = ("storage", "keyword", "embedder", "semantic", "reranker", "dedup")


def progress(console: Console) -> Progress | LineProgress:
    """Return a progress bar with count, elapsed and remaining time at a terminal, or
    progress lines (:class:`~.progress.LineProgress`) when the output is not one."""
    if not console.is_terminal:
        return LineProgress(console)
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), TimeRemainingColumn(), console=console, transient=False,
    )


def ingest_report(console: Console, report: AddReport, embedded: int, semantic_error: str | None) -> None:
    """Print what an ingest did."""
    console.print(
        f"added {len(report.added)}, replaced {len(report.replaced)}, unchanged "
        f"{len(report.unchanged)} documents; {report.chunks} chunks indexed, {embedded} embedded"
    )
    problem = report.semantic_error or semantic_error
    if problem:
        console.print(f"[yellow]vectors not written: {problem}[/yellow]")
        console.print("[yellow]these chunks are still found by their words[/yellow]")


def plugins(console: Console, registry: ArmRegistry) -> None:
    """Print installed arms by kind with their distribution and version."""
    table = Table(title="installed arms")
    for col in ("kind", "name", "distribution", "version", "description"):
        table.add_column(col)
    for kind in ARM_KIND_ORDER:
        for p in registry.provided(kind):  # type: ignore[arg-type]
            table.add_row(kind, p.spec.name, p.distribution, p.version, p.spec.description)
    console.print(table)


def status(console: Console, info: dict[str, Any]) -> None:
    """Print a pipeline's status."""
    table = Table(show_header=False)
    for key, value in info.items():
        if key == "arms":
            value = ", ".join(f"{k}={v}" for k, v in value.items() if v)
        table.add_row(key, "" if value is None else str(value))
    console.print(table)


def _flatten(data: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = []
    for key, value in data.items():
        if isinstance(value, dict) and value and key != "weights":
            rows += _flatten(value, f"{prefix}{key}.")
        else:
            rows.append((f"{prefix}{key}", value))
    return rows


def settings(console: Console, loaded: LoadedSettings, arm_options: dict[str, dict[str, Any]],
             arm_specs: dict[str, Any]) -> None:
    """Print every effective setting as ``key = value  group · layer`` (the value as TOML
    writes it: ``"sqlite"``, ``true``, ``(none)`` for not set), its meaning indented on the
    next lines; it reads at any width and when piped.

    :param arm_options: effective options of each configured arm, by arm name.
    :param arm_specs: arm name -> spec, to group ``arms.*`` keys by arm kind.
    """
    console.print("effective settings: key = value, its group (identity: needs re-indexing; "
                  "runtime; retrieval: reorders answers) · the layer it came from",
                  style="bold", highlight=False)
    dumped = loaded.settings.model_dump(mode="json")
    dumped["arms"] = {**dumped.get("arms", {}), **arm_options}
    for key, value in _flatten(dumped):
        field = setting_field(key, arm_specs)
        line = Text(f"{key} = ")
        line.append(toml_value(value), style="bold")
        line.append(f"  {setting_group(key, arm_specs)} · {loaded.source_of(key)}", style="dim")
        console.print(line, highlight=False)
        meaning = (field.description or "") if field is not None else ""
        if meaning:
            console.print(Padding(Text(meaning, style="dim"), (0, 0, 0, 4)), highlight=False)
