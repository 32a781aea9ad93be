"""Summarise MCP start-up runs (median, max per step) as ``report.json`` and ``report.md``."""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from .command import machine

#: The measured steps, in the order a client sends them.
STEPS = ("initialize", "tools/list", "recall", "remember")
#: Modes in report order.
MODES = ("cold", "warm")
#: The issue's target: spawn -> ``tools/list`` answered, cold cache (seconds; issue 6).
TOOLS_LIST_TARGET_S = 1.0


class RunLike(Protocol):
    """What the summary needs of a run (:class:`~.mcp_startup.StartupRun`)."""

    mode: str
    seconds: dict[str, float]
    cpu_seconds: dict[str, float]
    errors: dict[str, str]
    semantic_available: bool | None


def summarise(runs: Sequence[RunLike]) -> dict[str, dict[str, dict[str, float | int]]]:
    """Return mode -> step -> ``{"median_s", "max_s", "n", "cpu_median_s"}``.

    :param runs: measured runs; modes other than :data:`MODES` (the untimed cache fill)
        are left out, and so is a step a run did not answer. ``cpu_median_s`` (the
        server's CPU seconds when the answer came) is left out when no run has it.
    """
    summary: dict[str, dict[str, dict[str, float | int]]] = {}
    for mode in MODES:
        steps: dict[str, dict[str, float | int]] = {}
        for step in STEPS:
            values = [r.seconds[step] for r in runs if r.mode == mode and step in r.seconds]
            if values:
                steps[step] = {"median_s": round(statistics.median(values), 4),
                               "max_s": round(max(values), 4), "n": len(values)}
            cpu = [r.cpu_seconds[step] for r in runs if r.mode == mode and step in r.cpu_seconds]
            if values and cpu:
                steps[step]["cpu_median_s"] = round(statistics.median(cpu), 3)
        if steps:
            summary[mode] = steps
    return summary


def to_json(runs: Sequence[RunLike], label: str, load: tuple[float, float]) -> dict[str, Any]:
    """Return the report's data: summary, every run, machine and load average."""
    return {
        "label": label,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": machine(),
        "load_1m": {"start": round(load[0], 2), "end": round(load[1], 2)},
        "target_tools_list_s": TOOLS_LIST_TARGET_S,
        "summary": summarise(runs),
        "runs": [{"mode": r.mode, "seconds": r.seconds, "cpu_seconds": r.cpu_seconds,
                  "errors": r.errors,
                  "semantic_available": r.semantic_available}
                 for r in runs if r.mode in MODES],
    }


def _cell(stats: dict[str, float | int] | None) -> str:
    if stats is None:
        return "—"
    return f"{stats['median_s'] * 1e3:,.0f} / {stats['max_s'] * 1e3:,.0f}"


def to_markdown(data: dict[str, Any]) -> str:
    """Render the report: one row per mode, one column per step (median / max, ms)."""
    m, load = data["machine"], data["load_1m"]
    lines = [
        "# MCP server start-up: spawn -> first answers",
        "",
        f"{data['label'] + '; ' if data['label'] else ''}{data['date']}; {m['cpus']} CPUs, "
        f"{m['platform']}, Python {m['python']}; 1-minute load average {load['start']} "
        f"before, {load['end']} after (shared machine).",
        "",
        "Wall time from spawning `python -m octomem.mcp_server` to each answer, in ms, "
        "median / max over the runs. *cold*: empty user cache (the model is re-quantized "
        "on first use); *warm*: that cache filled. Last column: CPU ms (user + system, all "
        "threads, median) the server had used when `tools/list` was answered — the part of "
        "the wall time that does not depend on other jobs. Rerun: "
        "`python -m octomem.benchmarks.mcp_startup --out benchmarks/results/mcp`.",
        "",
        "| cache | runs | " + " | ".join(STEPS) + " | server CPU at tools/list |",
        "|---|---|" + "---|" * (len(STEPS) + 1),
    ]
    for mode, steps in data["summary"].items():
        n = max(int(s["n"]) for s in steps.values())
        cpu = steps.get("tools/list", {}).get("cpu_median_s")
        lines.append(f"| {mode} | {n} | " + " | ".join(_cell(steps.get(s)) for s in STEPS)
                     + (f" | {cpu * 1e3:,.0f} |" if cpu is not None else " | — |"))
    cold = data["summary"].get("cold", {}).get("tools/list")
    if cold is not None:
        verdict = "met" if cold["max_s"] < data["target_tools_list_s"] else "NOT met"
        lines += ["", f"Target: `tools/list` answered < {data['target_tools_list_s']:g} s after "
                  f"spawn with a cold cache — {verdict} (max {cold['max_s']:.3f} s)."]
    failed = [r for r in data["runs"] if r["errors"]]
    if failed:
        lines += ["", f"{len(failed)} run(s) reported errors: see report.json."]
    return "\n".join(lines) + "\n"


def write_report(
    runs: Sequence[RunLike], out: Path, label: str = "", load: tuple[float, float] = (0.0, 0.0)
) -> list[Path]:
    """Write ``report.json`` and ``report.md`` into ``out`` (created).

    :param load: 1-minute load average before and after the runs.
    :returns: the two paths written.
    """
    out.mkdir(parents=True, exist_ok=True)
    data = to_json(runs, label, load)
    json_path, md_path = out / "report.json", out / "report.md"
    json_path.write_text(json.dumps(data, indent=2) + "\n")
    md_path.write_text(to_markdown(data))
    return [json_path, md_path]
