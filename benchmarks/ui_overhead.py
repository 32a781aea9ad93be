"""Measure what the browser view costs an MCP recall: ``octomem serve`` with and without
``--ui-port``, the same memory, the same queries.

``python -m octomem.benchmarks.ui_overhead [--out benchmarks/results/ui]
[--recalls 200] [--docs docs]`` ingests ``--docs`` (the repo's documentation) into a
temporary project, starts two servers over it at once, one without the view and one with
it, warms both (model, in-RAM indexes), fetches the view's status page once (so it is
serving; then it stays idle), and times ``--recalls`` recalls on each as the client sees
them (write of the raw JSON-RPC line to its answer), one at a time, in turns whose order
alternates: load from other jobs on a shared machine falls on both alike.

Writes ``overhead.json`` and ``overhead.md``: p50 and p95 of each, the p50 of the
per-pair differences, each server's CPU time per recall over the timed part (user +
system, all threads, from ``/proc``: far less sensitive to other jobs than wall time;
the idle view's own timer wake-ups included), the 1-minute load average before and after.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from .arguments import at_least, bench_parser, existing_dir, run_main
from .mcp_startup import PROTOCOL_VERSION, _Lines, _send, cpu_seconds, environment

#: Queries cycled through by the timed recalls (about the ingested documentation).
QUERIES = ("how are keyword and semantic results combined", "what does dedup collapse",
           "where is the local scope stored", "how do I forget a statement",
           "which embedder is the default", "what does as_of do", "RRF k setting",
           "how are superseded statements kept")
#: Longest one answer may take (seconds).
ANSWER_TIMEOUT_S = 120.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _octomem() -> str:
    return str(Path(sys.executable).with_name("octomem"))


class Server:
    """One ``octomem serve`` over stdio (with the view on ``ui_port`` when given)."""

    def __init__(self, project: Path, env: dict[str, str], ui_port: int | None) -> None:
        args = [_octomem(), "serve"] + (["--ui-port", str(ui_port)] if ui_port else [])
        self.proc = subprocess.Popen(args, cwd=project, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.lines, self.next_id = self.proc.stdin, _Lines(self.proc.stdout), 1
        self.ask("initialize", {"protocolVersion": PROTOCOL_VERSION, "capabilities": {},
                                "clientInfo": {"name": "octomem-ui-overhead", "version": "1"}})
        _send(self.stdin, {"method": "notifications/initialized"})

    def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send one request and wait for its answer."""
        self.next_id += 1
        _send(self.stdin, {"id": self.next_id, "method": method, "params": params})
        answer = self.lines.answer(self.next_id, time.perf_counter() + ANSWER_TIMEOUT_S)
        if "error" in answer or answer.get("result", {}).get("isError"):
            raise RuntimeError(f"{method} failed: {answer}")
        return answer

    def recall_ms(self, query: str) -> float:
        """Time one recall as the client sees it, in milliseconds."""
        start = time.perf_counter()
        self.ask("tools/call", {"name": "recall", "arguments": {"query": query}})
        return (time.perf_counter() - start) * 1e3

    def close(self) -> None:
        """Close stdin (the server stops) and wait for it."""
        self.stdin.close()
        self.proc.wait(60)


def _pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def run(docs: Path, recalls: int) -> dict[str, Any]:
    """Ingest ``docs``; start a server without and one with the view; time them in turns.

    Both servers run at once and answer one recall at a time, alternately (which one goes
    first alternates too), so load from other jobs falls on both alike; the p50 of the
    per-pair differences is the view's cost.
    """
    with tempfile.TemporaryDirectory(prefix="octomem-ui-overhead-") as tmp:
        work = Path(tmp)
        project = work / "project"
        project.mkdir()
        env = environment(work / "home", work / "data")
        subprocess.run([_octomem(), "ingest", str(docs.resolve())], cwd=project, env=env,
                       check=True, capture_output=True)
        port = _free_port()
        servers = {"off": Server(project, env, None), "on": Server(project, env, port)}
        try:
            for query in QUERIES:  # warm-up: model, in-RAM indexes, code paths
                for server in servers.values():
                    server.recall_ms(query)
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/status") as page:
                assert page.status == 200  # the view is serving (then idle)
            load_before = os.getloadavg()[0]
            cpu = {arm: cpu_seconds(server.proc.pid) for arm, server in servers.items()}
            samples: dict[str, list[float]] = {"off": [], "on": []}
            for i in range(recalls):
                for arm in (("off", "on") if i % 2 == 0 else ("on", "off")):
                    samples[arm].append(servers[arm].recall_ms(QUERIES[i % len(QUERIES)]))
            cpu_ms = {arm: ((cpu_seconds(server.proc.pid) or 0.0) - (cpu[arm] or 0.0))
                      * 1e3 / recalls for arm, server in servers.items()}
            load_after = os.getloadavg()[0]
        finally:
            for server in servers.values():
                server.close()
    summary = {arm: {"p50_ms": round(statistics.median(v), 3), "p95_ms": round(_pct(v, 95), 3),
                     "server_cpu_ms_per_recall": round(cpu_ms[arm], 3), "recalls": len(v)}
               for arm, v in samples.items()}
    paired = [on - off for on, off in zip(samples["on"], samples["off"], strict=True)]
    return {**summary, "p50_difference_ms": round(statistics.median(paired), 3),
            "load_1min_before": round(load_before, 2), "load_1min_after": round(load_after, 2),
            "docs": str(docs)}


def write(result: dict[str, Any], out: Path) -> None:
    """Write ``overhead.json`` and ``overhead.md`` under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "overhead.json").write_text(json.dumps(result, indent=2) + "\n")
    rows = "\n".join(f"| {arm} | {result[arm]['p50_ms']:.2f} | {result[arm]['p95_ms']:.2f} | "
                     f"{result[arm]['server_cpu_ms_per_recall']:.2f} | "
                     f"{result[arm]['recalls']} |" for arm in ("off", "on"))
    (out / "overhead.md").write_text(
        "# What the browser view costs an MCP recall\n\n"
        "`python -m octomem.benchmarks.ui_overhead` (see its docstring): `octomem serve` "
        f"over stdio on `{result['docs']}` ingested: two servers at once, one without and one "
        "with `--ui-port` (the view idle while timing), answering one recall at a time in "
        "turns; client-side latency.\n\n"
        "| view | recall p50 ms | recall p95 ms | server CPU ms per recall | recalls |\n"
        "|---|---|---|---|---|\n"
        f"{rows}\n\np50 of the paired differences (on - off): "
        f"**{result['p50_difference_ms']:+.2f} ms**. "
        f"Load average (1 min): {result['load_1min_before']} before, "
        f"{result['load_1min_after']} after.\n")


def main(argv: list[str] | None = None) -> None:
    """Parse arguments, measure, write the report."""
    parser = bench_parser("ui_overhead", __doc__)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/ui"))
    parser.add_argument("--docs", type=existing_dir, default=Path("docs"),
                        help="a folder of Markdown to ingest (default: docs)")
    parser.add_argument("--recalls", type=at_least(1), default=200)
    args = parser.parse_args(argv)
    result = run(args.docs, args.recalls)
    write(result, args.out)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    run_main(main, "python -m octomem.benchmarks.ui_overhead")
