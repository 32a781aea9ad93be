"""What observation costs an MCP recall: the observer's own work, and recall p50 with/without.

``python -m octomem.benchmarks.observability_overhead --out benchmarks/results/observability
[--docs N] [--queries N] [--calls N]`` measures, in one process:

1. **the observer's own cost per call** — :class:`~octomem.mcp_server.observe.Observer`
   called as the SDK calls it, around a ``call_next`` that returns at once the wire result
   of a real recall (captured from the server below), ``--calls`` times per variant:
   metrics only (log records below the level); metrics and the ``INFO`` log line (to a
   real stderr-like stream, discarded); and the same with the call log on (a real
   :class:`~octomem.mcp_server.calllog.CallLogWriter` writing to the memory's SQLite files
   on its thread while the loop runs). Wall time per call, p50 and p95 in microseconds.
2. **recall through the MCP client, with and without** — one server over ``--docs``
   SciFact abstracts (stored as ``FACT`` documents; the default pipeline: fts5, sqlite-vec, the
   bundled MiniLM), logging as ``octomem serve`` does (text, INFO, stderr) and the call
   log on; in-process ``Client`` calls (the SDK's own dispatch, no transport). Each of
   ``--queries`` SciFact queries is sent twice back to back, once with the observer in
   the server's middleware and once without (the order alternating), so both sides share
   the memory, its caches and the process. Reports each side's p50 (wall) and median CPU
   time (``time.process_time``: every thread of the process, the call log writer's
   included), and the median of the paired differences with its bootstrap standard
   error; then the same with the observer on for both sides (A/A), whose paired
   difference is the noise floor of the machine.

The 1-minute load average is recorded before and after: on a shared, loaded machine the
end-to-end differences are read against their standard error and the A/A row, and the
directly timed cost (1) is the number that bounds what observation adds.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from mcp import Client

from octomem.engine.memory.facade import open_memory
from octomem.engine.types import Document
from octomem.mcp_server.calllog import CallLogWriter
from octomem.mcp_server.loader import MemoryLoader
from octomem.mcp_server.logs import configure_logging
from octomem.mcp_server.server import create_server, new_observer

from .arguments import at_least, beir_folder, bench_parser, run_main
from .command import machine

#: The budget issue 14 sets: what observation may add to an MCP recall's p50 (ms).
BUDGET_MS = 0.5
#: Where the SciFact BEIR folder is, from a checkout beside ``shared/`` (as ``octomem bench``).
DEFAULT_DATA = Path("../shared/data/scifact")


def _rows(path: Path, limit: int) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line, _ in zip(lines, range(limit), strict=False)]


def build_memory(root: Path, docs: list[dict[str, Any]]) -> dict[str, Any]:
    """Store ``docs`` (title and text) as ``FACT`` documents in a fresh global scope under
    ``root`` (the pipeline's batched write path); return the settings overrides that open it."""
    overrides = {"data_dir": str(root / "data")}
    memory = open_memory(overrides=overrides, project_root=root / "project")
    try:
        memory.scopes.require("global", create=True).add(
            Document(text=f"{doc.get('title', '')}. {doc['text']}"[:2000], kind="FACT")
            for doc in docs)
    finally:
        memory.close()
    return overrides


def _percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"p50": statistics.median(ordered), "p95": ordered[int(0.95 * (len(ordered) - 1))],
            "n": len(ordered)}


async def observer_cost(wire: dict[str, Any], calls: int, memory_overrides: dict[str, Any],
                        root: Path) -> dict[str, dict[str, float]]:
    """Part 1: microseconds per call of the observer alone, per variant."""
    ctx = SimpleNamespace(method="tools/call", params={
        "name": "recall", "arguments": {"query": "vitamin D and bone density", "top_k": 10}})

    async def call_next(_: Any) -> dict[str, Any]:
        return wire

    calls_log = logging.getLogger("octomem.calls")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    out: dict[str, dict[str, float]] = {}
    loader = MemoryLoader(lambda: open_memory(overrides=memory_overrides,
                                              project_root=root / "project"))
    variants: list[tuple[str, int, Callable[[Any], None] | None]] = [
        ("metrics", logging.WARNING, None), ("metrics + log line", logging.INFO, None),
        ("metrics + log line + call log", logging.INFO,
         lambda o: setattr(o, "sink", CallLogWriter(loader.memory, loader.write_lock)))]
    calls_log.addHandler(handler)
    calls_log.propagate = False
    try:
        for name, level, setup in variants:
            observer = new_observer()
            if setup is not None:
                setup(observer)
            calls_log.setLevel(level)
            for _ in range(200):  # warm-up
                await observer(ctx, call_next)
            times = []
            for _ in range(calls):
                start = time.perf_counter_ns()
                await observer(ctx, call_next)
                times.append((time.perf_counter_ns() - start) / 1e3)
                stream.seek(0)
                stream.truncate()
            if observer.sink is not None:
                observer.sink.close()  # type: ignore[attr-defined]
            out[name] = {k: round(v, 2) for k, v in _percentiles(times).items()}
    finally:
        calls_log.removeHandler(handler)
        calls_log.propagate = True
        loader.close(10)
    return out


async def recall_pair(overrides: dict[str, Any], root: Path, queries: list[str],
                      toggle: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
    """Part 2: recall through the client with the observer off and on, on one server.

    The observer (metrics, INFO log line, call log) is added to and removed from the
    server's middleware between calls, so both sides share the memory, its caches and
    the process; each query runs once each way, back to back, the order alternating.

    :param toggle: False for the A/A calibration: the observer stays on for both sides,
        so the paired difference shows the machine's noise alone.
    :returns: the summary, and one observed wire result (for part 1).
    """
    observer = new_observer()
    server = create_server(overrides={**overrides, "call_log": True},
                           project_root=root / "project", observer=observer)
    chain = server._lowlevel_server.middleware  # the SDK's list, read at every request
    times: dict[str, list[float]] = {"plain": [], "observed": []}
    cpu: dict[str, list[float]] = {"plain": [], "observed": []}
    wire: dict[str, Any] = {}
    async with Client(server) as client:
        for query in queries[:20]:  # warm-up: models, in-RAM copies, caches
            await client.call_tool("recall", {"query": query})
        for i, query in enumerate(queries):
            for side in (("plain", "observed") if i % 2 == 0 else ("observed", "plain")):
                if side == "plain" and toggle:
                    chain.remove(observer)
                start, start_cpu = time.perf_counter(), time.process_time()
                result = await client.call_tool("recall", {"query": query})
                times[side].append((time.perf_counter() - start) * 1e3)
                cpu[side].append((time.process_time() - start_cpu) * 1e3)
                if side == "plain" and toggle:
                    chain.append(observer)
                elif not wire:
                    wire = {"content": [], "structuredContent": result.structured_content,
                            "isError": False}
    summary: dict[str, Any] = {side: {k: round(v, 3) for k, v in _percentiles(t).items()}
                               for side, t in times.items()}
    summary["cpu_ms"] = {side: round(statistics.median(c), 3) for side, c in cpu.items()}
    for name, values in (("paired_difference_ms", times), ("paired_cpu_difference_ms", cpu)):
        deltas = [o - p for o, p in zip(values["observed"], values["plain"], strict=True)]
        summary[name] = {"median": round(statistics.median(deltas), 3), "n": len(deltas),
                         "standard_error": round(median_standard_error(deltas), 3)}
    return summary, wire


def median_standard_error(values: list[float], resamples: int = 2000) -> float:
    """Return the bootstrap standard error of the median of ``values`` (Efron 1979):
    the standard deviation of the medians of ``resamples`` resamples with replacement
    (seeded, so a report is reproducible from its data)."""
    rng = random.Random(0)
    medians = [statistics.median(rng.choices(values, k=len(values)))
               for _ in range(resamples)]
    return statistics.stdev(medians)


def _pm(difference: dict[str, float]) -> str:
    return f"{difference['median']:+.3f} ± {difference['standard_error']:.3f}"


def write_report(out: Path, result: dict[str, Any]) -> None:
    """Write ``report.json`` and ``report.md`` under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(result, indent=2) + "\n")
    cost, pair, same = result["observer_us"], result["recall_ms"], result["recall_ms_a_a"]
    lines = [
        "# What observation costs an MCP recall", "",
        f"{result['date']}; {result['machine']['cpus']} CPUs, Python "
        f"{result['machine']['python']}; 1-minute load average {result['load_before']:.2f} "
        f"before, {result['load_after']:.2f} after (a shared machine).",
        f"Command: `{result['command']}`", "",
        "## The observer's own work per tool call (microseconds)", "",
        "| variant | p50 µs | p95 µs | calls |", "|---|---|---|---|",
        *[f"| {name} | {v['p50']:.1f} | {v['p95']:.1f} | {v['n']:.0f} |"
          for name, v in cost.items()], "",
        "## Recall through the MCP client (milliseconds)", "",
        f"{result['docs']} SciFact abstracts as FACT documents (global scope), default pipeline; "
        f"{pair['plain']['n']:.0f} SciFact queries, each sent twice back to back to one "
        "server, with and without the observer in its middleware (order alternating).",
        "", "| observer | p50 ms | p95 ms | CPU ms (median, whole process) |",
        "|---|---|---|---|",
        f"| off | {pair['plain']['p50']:.2f} | {pair['plain']['p95']:.2f} | "
        f"{pair['cpu_ms']['plain']:.2f} |",
        f"| on (metrics, INFO log line, call log) | {pair['observed']['p50']:.2f} | "
        f"{pair['observed']['p95']:.2f} | {pair['cpu_ms']['observed']:.2f} |", "",
        "| paired difference, on − off (median ± bootstrap standard error) | wall ms | "
        "CPU ms |", "|---|---|---|",
        f"| observer toggled (A/B) | {_pm(pair['paired_difference_ms'])} | "
        f"{_pm(pair['paired_cpu_difference_ms'])} |",
        f"| observer on for both sides (A/A: the machine's noise) | "
        f"{_pm(same['paired_difference_ms'])} | {_pm(same['paired_cpu_difference_ms'])} |",
        "",
        f"Budget: {BUDGET_MS} ms on a recall's p50. The observer's own p50 with everything "
        f"on: **{cost['metrics + log line + call log']['p50'] / 1e3:.3f} ms** (part 1, timed "
        "directly); the end-to-end paired differences are read against their standard "
        "error and the A/A row.", "",
    ]
    (out / "report.md").write_text("\n".join(lines))


def main(argv: list[str] | None = None) -> int:
    """Run both parts and write the report."""
    parser = bench_parser("observability_overhead", __doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--data", type=beir_folder, default=DEFAULT_DATA, help="a BEIR folder")
    parser.add_argument("--docs", type=at_least(1), default=500)
    parser.add_argument("--queries", type=at_least(1), default=300)
    parser.add_argument("--calls", type=at_least(1), default=20_000)
    args = parser.parse_args(argv)
    configure_logging("text", "INFO")  # as `octomem serve` does (stderr, one line a call)
    load_before = os.getloadavg()[0]
    root = Path(tempfile.mkdtemp(prefix="octomem-obs-"))
    try:
        docs = _rows(args.data / "corpus.jsonl", args.docs)
        queries = [q["text"] for q in _rows(args.data / "queries.jsonl", args.queries)]
        overrides = build_memory(root, docs)
        (root / "project").mkdir(exist_ok=True)
        pair, wire = asyncio.run(recall_pair(overrides, root, queries))
        same, _ = asyncio.run(recall_pair(overrides, root, queries, toggle=False))
        cost = asyncio.run(observer_cost(wire, args.calls, overrides, root))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    result = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "machine": machine(), "load_before": load_before,
              "load_after": os.getloadavg()[0], "docs": args.docs,
              "command": "python -m octomem.benchmarks.observability_overhead "
                         + " ".join(argv if argv is not None else sys.argv[1:]),
              "observer_us": cost, "recall_ms": pair, "recall_ms_a_a": same,
              "budget_ms": BUDGET_MS}
    write_report(args.out, result)
    print((args.out / "report.md").read_text())
    return 0


if __name__ == "__main__":
    run_main(main, "python -m octomem.benchmarks.observability_overhead")
