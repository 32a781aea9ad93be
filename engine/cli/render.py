"""Rich rendering of CLI output: answers, reports, plugin and settings tables."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from ..manager import ArmRegistry
from ..pipeline import AddReport
from ..settings import LoadedSettings, setting_field, setting_group
from .layout import SafeConsole, emit, wrapped
from .progress import LineProgress
from .values import plural, toml_value

ARM_KIND_ORDER = ("storage", "keyword", "embedder", "semantic", "reranker", "dedup")


def progress(console: Console) -> Progress | LineProgress:
    """Return a progress bar with count, elapsed and remaining time at a terminal, or,
    when stderr is not one (a log file, a pipe), a line every 10 s while a step runs and
    none when it starts or ends (:class:`~.progress.LineProgress` with ``ends=False``): the
    command's summary says what was done.

    Progress goes to stderr, so ``octomem ingest ... > log`` keeps only what was done;
    ``console`` (stdout's) lends its width.
    """
    if not console.stderr:
        console = SafeConsole(stderr=True, soft_wrap=True, width=console.width)
    if not console.is_terminal:
        return LineProgress(console, ends=False)
    return Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), TimeRemainingColumn(), console=console, transient=False,
    )


def ingest_report(console: Console, report: AddReport, embedded: int,
                  semantic_error: str | None, part: str | None = None,
                  forgotten: int = 0, earlier: int = 0,
                  gone: tuple[int, int] | None = None, reused: int = 0) -> None:
    """Print what an ingest did; ``part`` names which of several parts it was (e.g.
    ``9 files``, ``chat.jsonl (10 turns)``); ``forgotten``: how many documents read were
    in the forget log and not added again; ``earlier``: how many of the chunks embedded an
    earlier (killed) ingest had left without a vector; ``gone``: ``(found, forgotten)``
    stored turns the transcript no longer holds (:mod:`~..memory.gone_turns`);
    ``reused``: how many of the ``embedded`` chunks took the vector stored for the same
    text instead (:mod:`~..vector_reuse`)."""
    console.print(
        f"{part + ': ' if part else ''}added {len(report.added):,}, replaced "
        f"{len(report.replaced):,}{moved(len(report.moved))}, unchanged "
        f"{plural(len(report.unchanged), 'document')}"
        f"{f', {forgotten} forgotten, not re-added' if forgotten else ''}"
        f"{gone_turns(*gone) if gone else ''}; "
        f"{plural(report.chunks, 'chunk')} indexed, {embedded - reused:,} embedded"
        f"{f', {reused:,} given the vector stored for the same text' if reused else ''}"
        f"{f' ({earlier:,} left without a vector by an earlier ingest)' if earlier else ''}",
        highlight=False,
        soft_wrap=True)
    problem = report.semantic_error or semantic_error
    if problem:
        console.print(f"[yellow]vectors not written: {problem}[/yellow]")
        console.print("[yellow]these chunks are still found by their words[/yellow]")


def moved(n: int) -> str:
    """Return the summary's words for the replaced documents that only moved."""
    return f" ({n:,} of them moved: read from a new path, the old one gone)" if n else ""


def gone_turns(found: int, forgot: int) -> str:
    """Return the summary's words for the stored turns a transcript no longer holds."""
    if forgot:
        return f", {plural(forgot, 'turn')} no longer in the file forgotten"
    return f", {plural(found, 'turn')} no longer in the file kept (ingest.on_missing = keep)"


def plugins(console: Console, registry: ArmRegistry) -> None:
    """Print installed arms by kind: kind, name, distribution, version and description
    in aligned columns; a long description wraps under itself, at a terminal and piped
    alike (piped output is 80 columns unless ``COLUMNS`` says otherwise)."""
    rows = [("kind", "name", "distribution", "version", "description")]
    for kind in ARM_KIND_ORDER:
        for p in registry.provided(kind):  # type: ignore[arg-type]
            rows.append((kind, p.spec.name, p.distribution, p.version,
                         " ".join((p.spec.description or "").split())))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for n, row in enumerate(rows):
        line = "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + "  "
        lines = wrapped(row[4], console.width, " " * len(line), first=line)
        emit(console, lines, style="bold" if n == 0 else None)


def _flatten(data: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = []
    for key, value in data.items():
        if isinstance(value, dict) and value and key != "weights":
            rows += _flatten(value, f"{prefix}{key}.")
        else:
            rows.append((f"{prefix}{key}", value))
    return rows


def setting_rows(loaded: LoadedSettings,
                 arm_options: dict[str, dict[str, Any]]) -> list[tuple[str, Any]]:
    """Return every effective setting as ``(dotted key, JSON value)``, the configured arms'
    options under ``arms.NAME``; ``config`` prints them in this order.

    :param arm_options: effective options of each configured arm, by arm name.
    """
    dumped = loaded.settings.model_dump(mode="json")
    dumped["arms"] = {**dumped.get("arms", {}), **arm_options}
    return _flatten(dumped)


def settings(console: Console, loaded: LoadedSettings, rows: list[tuple[str, Any]],
             arm_specs: dict[str, Any]) -> None:
    """Print every effective setting as ``key = value  group · layer`` (the value as TOML
    writes it: ``"sqlite"``, ``true``, ``(none)`` for not set; ``group · layer`` on the
    next line when the line would be wider than the console), its meaning indented on the
    next lines; it reads at any width and when piped, no line ending in spaces.

    :param rows: ``(dotted key, value)`` to print (:func:`setting_rows`, or some of them).
    :param arm_specs: arm name -> spec, to group ``arms.*`` keys by arm kind.
    """
    emit(console, wrapped("effective settings: key = value, its group (identity: needs "
                          "re-indexing; runtime; retrieval: reorders answers) · the layer "
                          "it came from", console.width), style="bold")
    for key, value in rows:
        field = setting_field(key, arm_specs)
        line = Text(f"{key} = ")
        line.append(toml_value(value), style="bold")
        meta = f"{setting_group(key, arm_specs)} · {loaded.source_of(key)}"
        if len(line) + 2 + len(meta) <= console.width:
            line.append(f"  {meta}", style="dim")
            meta = ""
        console.print(line, highlight=False, soft_wrap=True)  # a long value stays whole
        if meta:  # no room beside the value: its group and layer on a line of their own
            emit(console, [f"    ({meta})"], style="dim")
        meaning = (field.description or "") if field is not None else ""
        if meaning:
            emit(console, wrapped(meaning, console.width, "    "), style="dim")
