"""Plots of a run (matplotlib, Agg backend): quality vs latency, latency by stage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .runner import OTHER, TOTAL  # noqa: E402


def plot_quality_vs_latency(data: dict[str, Any], path: Path, metric: str = "ndcg@10") -> None:
    """Scatter each row's ``metric`` against its end-to-end p50 latency (ms, log scale)."""
    fig, ax = plt.subplots(figsize=(7.5, 4.8), dpi=120)
    for row in data["rows"]:
        x = max(row["latency"][TOTAL]["p50_ms"], 1e-3)
        y = row["quality"][metric]
        ax.scatter([x], [y], s=36)
        ax.annotate(row["name"], (x, y), textcoords="offset points", xytext=(5, 4), fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("end-to-end p50 latency per query (ms, log scale)")
    ax.set_ylabel(metric.replace("ndcg", "nDCG"))
    ds = data["dataset"]
    ax.set_title(f"{ds['name']} ({ds['split']}): quality vs latency")
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def plot_latency_breakdown(data: dict[str, Any], path: Path) -> None:
    """Stack each row's median per-stage time (ms): arms, query embedding, other."""
    rows = data["rows"]
    stages: list[str] = []
    for row in rows:
        stages += [s for s in row["latency"] if s not in (TOTAL, OTHER, *stages)]
    stages.append(OTHER)
    fig, ax = plt.subplots(figsize=(8.5, 0.45 * len(rows) + 1.6), dpi=120)
    names = [r["name"] for r in rows]
    left = [0.0] * len(rows)
    for stage in stages:
        widths = [r["latency"].get(stage, {}).get("p50_ms", 0.0) for r in rows]
        ax.barh(names, widths, left=left, label=stage)
        left = [a + b for a, b in zip(left, widths, strict=True)]
    ax.invert_yaxis()
    ax.set_xlabel("median time per query by stage (ms)")
    ax.set_title(f"{data['dataset']['name']}: where a query's time goes")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
