"""Writing a run's report: ``report.json`` (everything) and ``report.md`` (the tables)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from .command import BenchResult, machine
from .metrics import ALPHA, METRICS, STAT_TEST
from .runner import OTHER, TOTAL, ComboResult
from .smoke import describe
from .subsets import ASKED_OF_REMOVED

MIB = 1024 * 1024
_LABELS = {"ndcg@10": "nDCG@10", "recall@10": "R@10", "recall@100": "R@100", "mrr@10": "MRR@10"}


def _stages(combo: ComboResult) -> list[str]:
    """Timed stages of a row, arms first, then ``other`` and ``total``."""
    arms = [s for s in combo.timings_ms if s not in (TOTAL, OTHER)]
    return [*arms, OTHER, TOTAL]


def _latency(combo: ComboResult) -> dict[str, dict[str, float]]:
    return {
        stage: {
            "p50_ms": combo.percentile(stage, 50) or 0.0,
            "p95_ms": combo.percentile(stage, 95) or 0.0,
            "mean_ms": sum(combo.timings_ms[stage]) / len(combo.timings_ms[stage]),
        }
        for stage in _stages(combo)
        if combo.timings_ms.get(stage)
    }


def to_json(result: BenchResult) -> dict[str, Any]:
    """Return the whole run as JSON-ready data."""
    ev = result.evaluation
    single = [r.combo.name for r in result.combos if r.combo.single_arm]
    rows = []
    for r in result.combos:
        name = r.combo.name
        rows.append(
            {
                "name": name,
                "spec": r.combo.spec(),
                "arms_ran": r.arms_ran,
                "arms_unavailable": r.arms_unavailable,
                "quality": ev.scores[name],
                "p_value_vs_baseline": ev.p_values.get(name),
                "p_values_vs_single_arms": {
                    other: ev.pairwise[name][other]
                    for other in single
                    if other != name and other in ev.pairwise.get(name, {})
                },
                "latency": _latency(r),
                "latency_quality_pass": {
                    "top_k": result.top_k,
                    "p50_ms": r.percentile(TOTAL, 50, eval_pass=True),
                    "p95_ms": r.percentile(TOTAL, 95, eval_pass=True),
                },
                "warmup_ms": r.warmup_ms,
                "index_bytes": r.index_bytes,
                "peak_rss_bytes": r.peak_rss_bytes,
                "rss_bytes": r.rss_bytes,
                "chunker": r.combo.chunker,
                **({"abstention": r.extra["after"]} if r.extra.get("after") else {}),
            }
        )
    ds = result.dataset
    return {
        "dataset": {
            "name": ds.name,
            "folder": str(ds.folder),
            "split": ds.split,
            "queries": len(ds.queries),
            "corpus_sha256": ds.corpus_sha256,
            "subset": {k: v for k, v in ds.extra["subset"].items() if k != "ids"}
            if "subset" in ds.extra else None,
        },
        "group_by": result.group_by,
        "query_filter": result.query_filter,
        "top_k": result.top_k,
        "latency_top_k": result.latency_top_k,
        "metrics": list(METRICS),
        "stat_test": {
            "test": f"ranx compare, {STAT_TEST} (two-sided paired t-test)",
            "baseline": ev.baseline,
            "alpha": ALPHA,
            "single_arms": single,
        },
        "rows": rows,
        "build": result.build,
        "machine": machine(),
        "command": result.command,
        "seconds": result.seconds,
        "load_average": result.load,
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }


def _p(p: float | None) -> str:
    if p is None:
        return "—"
    text = f"{p:.2g}" if p >= 1e-4 else "<1e-4"
    return f"**{text}**" if p < ALPHA else text


def _quality_table(data: dict[str, Any]) -> list[str]:
    base = data["stat_test"]["baseline"]
    head = ["row", "arms", *(_LABELS[m] for m in METRICS), f"p vs {base} (nDCG@10)", "p (R@100)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in data["rows"]:
        p = row["p_value_vs_baseline"] or {}
        cells = [
            row["name"],
            f"`{row['spec']}`",
            *(f"{row['quality'][m]:.4f}" for m in METRICS),
            "(baseline)" if row["name"] == base else _p(p.get("ndcg@10")),
            _p(p.get("recall@100")),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _vs_single_table(data: dict[str, Any]) -> list[str]:
    """nDCG@10 difference and p-value of each multi-arm row against each single arm."""
    single = data["stat_test"]["single_arms"]
    by_name = {r["name"]: r for r in data["rows"]}
    rows = [r for r in data["rows"] if r["name"] not in single and r["p_values_vs_single_arms"]]
    if not rows or not single:
        return []
    lines = [
        "| row | " + " | ".join(f"vs {s}" for s in single) + " |",
        "|" + "---|" * (1 + len(single)),
    ]
    for row in rows:
        cells = []
        for arm in single:
            delta = row["quality"]["ndcg@10"] - by_name[arm]["quality"]["ndcg@10"]
            cells.append(f"{delta:+.4f} (p {_p(row['p_values_vs_single_arms'][arm]['ndcg@10'])})")
        lines.append(f"| {row['name']} | " + " | ".join(cells) + " |")
    return ["nDCG@10 difference to each single arm, p of the paired t-test:", "", *lines, ""]


def _cost_table(data: dict[str, Any]) -> list[str]:
    k, k_eval = data["latency_top_k"], data["top_k"]
    head = [
        "row",
        f"p50 ms @{k}",
        f"p95 ms @{k}",
        f"per stage p50 / p95 ms @{k}",
        f"p50 / p95 ms @{k_eval}",
        "first query ms",
        "index MiB",
        "peak RSS MiB",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in data["rows"]:
        lat = row["latency"]
        stages = "; ".join(
            f"{s} {v['p50_ms']:.2f} / {v['p95_ms']:.2f}" for s, v in lat.items() if s != TOTAL
        )
        deep = row["latency_quality_pass"]
        cells = [
            row["name"],
            f"{lat[TOTAL]['p50_ms']:.2f}",
            f"{lat[TOTAL]['p95_ms']:.2f}",
            stages,
            f"{deep['p50_ms']:.2f} / {deep['p95_ms']:.2f}",
            f"{row['warmup_ms']:.0f}",
            f"{row['index_bytes'] / MIB:.1f}",
            f"{row['peak_rss_bytes'] / MIB:.0f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def step_order(step: str) -> tuple[int, str]:
    """Sort key putting build steps in the order they run: storage, keyword, vectors, semantic."""
    kinds = ("storage", "keyword", "vectors", "semantic")
    kind = step.split(":")[0]
    return (kinds.index(kind) if kind in kinds else len(kinds), step)


def _build_table(data: dict[str, Any]) -> list[str]:
    lines = [
        "| chunked by | step | seconds | docs/s | chunks/s | on disk MiB |",
        "|---|---|---|---|---|---|",
    ]
    for chunker, entry in data["build"].items():
        steps = entry["steps"]
        docs = steps.get("storage", {}).get("documents", 0)
        chunks = steps.get("storage", {}).get("chunks", 0)
        for step, s in sorted(steps.items(), key=lambda item: step_order(item[0])):
            sec = max(float(s.get("seconds", 0.0)), 1e-9)
            size = f"{s['bytes'] / MIB:.1f}" if "bytes" in s else "—"
            lines.append(
                f"| {chunker} | {step} | {sec:.2f} | {docs / sec:,.0f} "
                f"| {chunks / sec:,.0f} | {size} |"
            )
    return lines


def _abstention_table(data: dict[str, Any]) -> list[str]:
    """The abstention pass (``--abstention``), when it ran: see :mod:`.subsets`."""
    rows = [r for r in data["rows"] if r.get("abstention")]
    if not rows:
        return []
    removed = rows[0]["abstention"].get("asked_of") == ASKED_OF_REMOVED
    col = "removed" if removed else "other"
    where = ("of the store with the query's relevant documents hidden from every arm "
             "(nothing stored answers it)" if removed else
             "of another group's memory, where nothing answers it,")
    out = ["## Abstention", "",
           f"Each query asked through `recall` (top 10) {where} and as it is normally "
           f"asked (own). {col} empty: share of the first answers with no hits; own kept: "
           "of the queries whose evidence was in the quality pass's top 10, the share "
           "whose recall answer still holds it.", "",
           f"| row | {col} empty | own empty "
           "| own evidence@10 | own kept |",
           "|---|---|---|---|---|"]
    for r in rows:
        a = r["abstention"]
        kept = "—" if a["own_kept"] is None else f"{a['own_kept']:.3f}"
        other = "—" if a.get("other_empty") is None else f"{a['other_empty']:.3f}"
        out.append(f"| {r['name']} | {other} | {a['own_empty']:.3f} | "
                   f"{a['own_evidence_at_10']:.3f} | {kept} |")
    return [*out, *_not_asked(rows[0]["abstention"], col), *_others_table(rows), ""]


def _others_table(rows: list[dict[str, Any]]) -> list[str]:
    """The wider other-group asks (``--abstention-groups``), when they ran."""
    if "others_asked" not in rows[0]["abstention"]:
        return []
    groups = rows[0]["abstention"]["others_groups"]
    which = "every other group" if groups == "all" else f"the next {groups} other group(s)"
    out = ["", f"Each query also asked of {which} among the evaluated queries' groups "
           "(`--abstention-groups`): asks (query × group), the share of them with no hits, "
           "and the queries that got hits from at least one. `other empty` above asks one "
           "group per query.", "",
           "| row | asks | others empty | queries answered by another group |", "|---|---|---|---|"]
    for r in rows:
        a = r["abstention"]
        empty = "—" if a["others_empty"] is None else f"{a['others_empty']:.3f}"
        out.append(f"| {r['name']} | {a['others_asked']} | {empty} "
                   f"| {a['others_queries_answered']} of {a['queries']} |")
    return out


def _not_asked(first: dict[str, Any], col: str) -> list[str]:
    """Say when the abstention pass asked fewer queries than it ran: their other group
    holds no documents in this index (a ``--limit`` index holds its queries' groups)."""
    asked, n = first.get("other_asked", first["queries"]), first["queries"]
    if asked == n:
        return []
    which = "none of the" if asked == 0 else f"{asked} of the {n}"
    return ["", f"{col} empty: {which} queries asked, since this index holds no document of "
            "another group for the others (a `--limit` index is built from its queries' "
            "groups only; asking a group of no documents would be empty whatever the row "
            "does). Run without `--limit`, or with a `--query-filter` of two groups, to "
            "measure it."]


def to_markdown(data: dict[str, Any]) -> str:
    """Return the report as Markdown: quality, cost, ingest tables and the plots."""
    ds, m = data["dataset"], data["machine"]
    group = f", candidates grouped by `{data['group_by']}`" if data["group_by"] else ""
    if data.get("query_filter"):
        group += f", queries with `{data['query_filter']}`"
    out = [
        f"# octomem bench: {ds['name']} ({ds['split']}, {ds['queries']} queries{group})",
        "",
        f"Command: `{data['command']}`  ",
        f"Date: {data['date']}; {m['cpus']} CPUs, {m['platform']}, "
        f"Python {m['python']}; run took {data['seconds']:.0f} s; 1-minute load average "
        f"{data['load_average'].get('start_1m', 0):.1f} at the start, "
        f"{data['load_average'].get('end_1m', 0):.1f} at the end (other work on the machine "
        "inflates latencies).",
        "",
        *([f"**Smoke run:** {describe(ds['subset'])}.", ""] if ds.get("subset") else []),
        "## Quality",
        "",
        f"Computed by ranx over `qrels/{ds['split']}.tsv`; answers of top_k={data['top_k']}, "
        "chunks mapped to their document (best chunk first). p: two-sided paired t-test "
        "(ranx `compare`) against the best single arm, **bold** below "
        f"{data['stat_test']['alpha']}.",
        "",
        *_quality_table(data),
        "",
        *_vs_single_table(data),
        "## Cost per query",
        "",
        f"Wall time of `Pipeline.search` per query at top_k={data['latency_top_k']} (up to 300 "
        "queries spread over the split, after one untimed warm-up query), and end to end at "
        f"top_k={data['top_k']} over every query of the quality pass. Stages from "
        "`Answer.timings_ms`; `other` = fusion, fetching chunks and vectors, rerank, dedup. "
        "First query = the warm-up (model load, lazy index build). Index = storage plus the "
        "row's keyword and vector indexes on disk. Peak RSS = the process's peak while the row "
        "ran (reset before each row).",
        "",
        *_cost_table(data),
        "",
        "## Ingest (built once, cached)",
        "",
        "`storage`: documents chunked and stored (no index); `keyword:*`: that arm indexing the "
        "stored chunks; `vectors`: the embedder's compute only; `semantic:*`: writing the vectors "
        "into that arm's index.",
        "",
        *_build_table(data),
        "",
        "## Plots",
        "",
        "![quality vs latency](quality_vs_latency.png)",
        "",
        "![latency by stage](latency_breakdown.png)",
        "",
    ]
    out += _abstention_table(data)
    unavailable = [
        (r["name"], a, why) for r in data["rows"] for a, why in r["arms_unavailable"].items()
    ]
    if unavailable:
        out += (
            ["## Arms that did not run", ""]
            + [f"- {n}: {a}: {why}" for n, a, why in unavailable]
            + [""]
        )
    return "\n".join(out)


def write_report(result: BenchResult, out: Path) -> dict[str, Path]:
    """Write ``report.json``, ``report.md`` and the plots into ``out`` (created if missing).

    :returns: kind -> path of each file written.
    """
    from .plots import plot_latency_breakdown, plot_quality_vs_latency

    out.mkdir(parents=True, exist_ok=True)
    data = to_json(result)
    paths = {
        "json": out / "report.json",
        "markdown": out / "report.md",
        "quality_plot": out / "quality_vs_latency.png",
        "latency_plot": out / "latency_breakdown.png",
    }
    paths["json"].write_text(json.dumps(data, indent=2, default=float) + "\n", encoding="utf-8")
    paths["markdown"].write_text(to_markdown(data), encoding="utf-8")
    plot_quality_vs_latency(data, paths["quality_plot"])
    plot_latency_breakdown(data, paths["latency_plot"])
    return paths
