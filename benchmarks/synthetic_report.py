"""The scale curve's report: Markdown tables and a plot (latency and build time vs size)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .peers import peers_markdown  # noqa: E402
from .report import step_order  # noqa: E402

MIB = 1024 * 1024
GB = 1e9


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:,.2f}"


def _latency_rows(result: dict[str, Any]) -> list[str]:
    lines = [
        "| docs | row | p50 ms | p95 ms | per stage p50 ms | index build s | first query ms "
        "| RSS growth MiB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for size in result["sizes"]:
        for name, row in size["rows"].items():
            if "skipped" in row:
                lines.append(f"| {size['docs']:,} | {name} | skipped: {row['skipped']} | | | | | |")
                continue
            lat = row["latency"]
            stages = "; ".join(
                f"{s} {_ms(v['p50_ms'])}" for s, v in lat.items() if s not in ("total", "other")
            )
            lines.append(
                f"| {size['docs']:,} | {name} | {_ms(lat['total']['p50_ms'])} "
                f"| {_ms(lat['total']['p95_ms'])} "
                f"| {stages} | {row['build_seconds']:.1f} | {row['warmup_ms']:,.0f} "
                f"| {row['rss_growth_bytes'] / MIB:,.0f} |"
            )
    return lines


def _recall(row: dict[str, Any]) -> str:
    value = row.get("recall_at_10_vs_exact")
    return "—" if value is None else f"{value:.3f}"


def _floor_rows(result: dict[str, Any]) -> list[str]:
    lines = [
        "| docs | row | vectors MiB | bandwidth floor ms | numpy flat scan p50 ms "
        "| semantic arm p50 ms | arm / floor | recall@10 vs exact | load 1m |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for size in result["sizes"]:
        load = size.get("load_1m", {})
        loads = f"{load['start']:.1f}–{load['end']:.1f}" if load else "—"
        for name, row in size["rows"].items():
            if not row.get("semantic"):
                continue
            p50 = row.get("latency", {}).get(row["semantic"], {}).get("p50_ms")
            ratio = f"{row['floor_ratio']:.1f}x" if "floor_ratio" in row else "—"
            lines.append(
                f"| {size['docs']:,} | {name} | {size['vector_bytes'] / MIB:,.0f} "
                f"| {size['floor_ms']:.2f} | {size['numpy_scan']['p50_ms']:.2f} | {_ms(p50)} "
                f"| {ratio} | {_recall(row)} | {loads} |"
            )
    return lines


def _corpus_lines(result: dict[str, Any]) -> list[str]:
    info = result.get("corpus_info") or {}
    if result.get("corpus", "random") == "random":
        return [f"Corpus: random — {info.get('recipe', 'Zipf pseudo-words, Gaussian vectors')}."]
    cos = info["cosine"]
    return [
        f"Corpus: realistic — {info['recipe']}. Base: {info['base_texts']:,} texts "
        f"({info['scifact_chunks']:,} SciFact chunks, {info['locomo_turns']:,} LoCoMo turns) "
        f"embedded by `{info['model_id']}` in {info['embedding_seconds']:.0f} s; "
        f"perturbation sigma {cos['sigma']:.4f} (target cos {info['target_cosine']}, "
        f"measured cos(v, v') {cos['min']:.3f}–{cos['max']:.3f}, mean {cos['mean']:.3f}). "
        "Queries: SciFact test claims, embedded by the same model at search time.",
    ]


def _build_rows(result: dict[str, Any]) -> list[str]:
    lines = ["| docs | step | seconds | docs/s | on disk MiB |", "|---|---|---|---|---|"]
    for size in result["sizes"]:
        for step, s in sorted(size["build"].items(), key=lambda item: step_order(item[0])):
            sec = max(float(s.get("seconds", 0.0)), 1e-9)
            disk = f"{s['bytes'] / MIB:,.0f}" if "bytes" in s else "—"
            lines.append(
                f"| {size['docs']:,} | {step} | {sec:,.1f} | {size['docs'] / sec:,.0f} | {disk} |"
            )
    return lines


def scale_markdown(result: dict[str, Any], plot_name: str = "scale.png") -> str:
    """Return the scale curve as Markdown (``plot_name``: the PNG beside it)."""
    bw = result["bandwidth_bytes_per_s"]
    m = result["machine"]
    return "\n".join(
        [
            f"# octomem scale curve ({result.get('corpus', 'random')} corpus)",
            "",
            *_corpus_lines(result),
            "",
            f"{m['cpus']} CPUs, {m['platform']}, Python {m['python']}; {result['date']}. "
            f"Queries at top_k={result['top_k']}; rows whose projected time exceeds "
            f"{result['budget_s']:.0f} s are skipped.",
            "",
            f"Measured read bandwidth (numpy, 1 GiB float32): sum {bw['sum'] / GB:.1f} GB/s, "
            f"sgemv {bw['sgemv'] / GB:.1f} GB/s; the floor uses the better, "
            f"{bw['best'] / GB:.1f} GB/s. {result.get('bandwidth_note', '')}",
            "",
            "## Query latency",
            "",
            *_latency_rows(result),
            "",
            *_peer_section(result),
            "## Exact vector scan vs the memory-bandwidth floor",
            "",
            "Floor = stored vector bytes (docs x 384 x 4) / measured bandwidth: "
            "no exact scan can be faster. "
            "numpy flat scan = `vectors @ q` + `argpartition` over the same vectors in RAM. "
            "arm / floor = the semantic arm's own p50 (its stage in `timings_ms`) over the "
            "floor. recall@10 vs exact = share of an exact float search's top 10 (numpy over "
            "the stored vectors, the same query vectors, no filters) that the row returned.",
            "",
            *_floor_rows(result),
            "",
            "## Build",
            "",
            *_build_rows(result),
            "",
            f"![scale curve]({plot_name})",
            "",
        ]
    )


def _peer_section(result: dict[str, Any]) -> list[str]:
    """The peers' table (realistic corpus), or nothing when no size ran them."""
    table = peers_markdown(result["sizes"])
    if not table:
        return []
    skipped = {p: r for s in result["sizes"] for p, r in (s.get("peers") or {}).get(
        "skipped", {}).items()}
    return [
        "## Peers, same texts and vectors, interleaved (p50 ms)",
        "",
        "Every query asked of octomem (the `hybrid` row's pipeline, warmed) and of each "
        "peer in turn; 10 % = a `metadata.group` filter keeping one of 10 groups. "
        "octomem keyword / vector = its `fts5` / `sqlite-vec` stage inside the hybrid "
        "answer; a peer's vector row is its search alone (query vector computed before), "
        "its hybrid embeds the query with the same model, then fuses its two top-100 "
        "lists by RRF (k = 2). Ratio = octomem / the fastest peer of that row "
        "(`benchmarks/peers.py`).",
        "",
        *table,
        "",
        *[f"Skipped {p}: {r}." for p, r in skipped.items()],
        "",
    ]


def scale_plot(result: dict[str, Any], path: Path) -> None:
    """Plot p50 latency per row and the bandwidth floor vs size (log-log), and build times."""
    sizes = result["sizes"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.4), dpi=120)
    names = list(dict.fromkeys(n for s in sizes for n in s["rows"]))
    for name in names:
        pts = [
            (s["docs"], s["rows"][name]["latency"]["total"]["p50_ms"])
            for s in sizes
            if name in s["rows"] and "latency" in s["rows"][name]
        ]
        if pts:
            left.plot(*zip(*pts, strict=True), marker="o", label=f"{name} (end to end)")
    docs = [s["docs"] for s in sizes]
    left.plot(
        docs, [s["numpy_scan"]["p50_ms"] for s in sizes], "k--", marker="x", label="numpy flat scan"
    )
    left.plot(docs, [s["floor_ms"] for s in sizes], "k:", label="bandwidth floor (exact scan)")
    left.set(
        xscale="log",
        yscale="log",
        xlabel="documents",
        ylabel="p50 latency per query (ms)",
        title="query latency vs corpus size",
    )
    left.grid(True, which="both", alpha=0.3)
    left.legend(fontsize=7)
    steps = list(dict.fromkeys(k for s in sizes for k in s["build"]))
    for step in steps:
        pts = [(s["docs"], s["build"][step]["seconds"]) for s in sizes if step in s["build"]]
        right.plot(*zip(*pts, strict=True), marker="o", label=step)
    right.set(
        xscale="log",
        yscale="log",
        xlabel="documents",
        ylabel="seconds",
        title="build time vs corpus size",
    )
    right.grid(True, which="both", alpha=0.3)
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
