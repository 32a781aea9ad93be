"""Measure the MCP server's start-up as a client sees it: spawn -> first answers.

``python -m octomem.benchmarks.mcp_startup --out benchmarks/results/mcp [--runs N]``
starts ``python -m octomem.mcp_server`` as a subprocess over stdio, N times with a
**cold** model cache (fresh ``HOME`` and ``XDG_*`` directories, so the bundled MiniLM is
re-quantized into an empty user cache) and N times with a **warm** one (one cache
directory shared by the runs, filled by an untimed first run), each with a fresh data
directory and project. Each run writes raw JSON-RPC lines (no client library in the
timed path, nothing buffered or retried) and records the wall time from just before
the spawn to each answer:

- ``initialize`` (the first request, written at once: the server reads it when ready),
- ``tools/list`` (sent after ``initialize``'s answer and the ``initialized`` notice),
- the first ``recall`` (waits for the embedding model, see :mod:`octomem.mcp_server.loader`),
- the first ``remember``.

The report (``report.md`` + ``report.json``, see :mod:`.mcp_startup_report`) gives the
median and max per step, with the 1-minute load average before and after.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .arguments import at_least, bench_parser, run_main
from .mcp_startup_report import STEPS, write_report

#: Longest one answer may take before the run is abandoned (seconds; a cold model
#: load is ~2-5 s on a quiet 2-core machine, far less than this).
ANSWER_TIMEOUT_S = 120.0
#: MCP protocol revision sent in ``initialize``: the newest one the handshake reaches
#: (``mcp_types.version.LATEST_HANDSHAKE_VERSION`` in mcp 2.3).
PROTOCOL_VERSION = "2025-11-25"


@dataclass
class StartupRun:
    """One server start: seconds from spawn to each answer (``None``: not answered).

    :param mode: ``cold`` (empty user cache) or ``warm`` (re-quantized model cached).
    :param seconds: step name (:data:`~.mcp_startup_report.STEPS`) -> seconds from spawn.
    :param cpu_seconds: step name -> CPU seconds (user + system, all threads) the server
        had used when the answer arrived; less sensitive to other jobs than wall time
        (Linux ``/proc/<pid>/stat``; empty elsewhere).
    :param errors: step name -> the JSON-RPC or tool error text, for steps that failed.
    :param semantic_available: what ``status`` answered after the timed steps (the first
        ``recall`` of a fresh install searches no store, so its answer cannot say).
    """

    mode: str
    seconds: dict[str, float] = field(default_factory=dict)
    cpu_seconds: dict[str, float] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    semantic_available: bool | None = None


class _Lines:
    """Read a pipe's lines on a daemon thread so a read can time out."""

    def __init__(self, pipe: IO[bytes]) -> None:
        self._queue: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, args=(pipe,), daemon=True).start()

    def _pump(self, pipe: IO[bytes]) -> None:
        for line in iter(pipe.readline, b""):
            self._queue.put(line)
        self._queue.put(b"")

    def answer(self, request_id: int, deadline: float) -> dict[str, Any]:
        """Return the JSON-RPC response with this id, skipping notifications and requests.

        :param deadline: ``time.perf_counter()`` value after which to give up.
        :raises TimeoutError: no answer before the deadline.
        :raises EOFError: the server closed stdout first.
        """
        while True:
            try:
                line = self._queue.get(timeout=max(deadline - time.perf_counter(), 0.001))
            except queue.Empty:
                raise TimeoutError(f"no answer to request {request_id}") from None
            if not line:
                raise EOFError(f"the server exited before answering request {request_id}")
            message = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                return message


def cpu_seconds(pid: int) -> float | None:
    """Return a live process's user + system CPU time in seconds, or ``None`` off Linux.

    Fields 14 and 15 of ``/proc/<pid>/stat`` (utime, stime), in clock ticks (proc(5)).
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "; field 3 is fields[0]
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _send(stdin: IO[bytes], message: dict[str, Any]) -> None:
    stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
    stdin.flush()


def _requests() -> list[tuple[str, dict[str, Any]]]:
    """Return the measured steps' requests, in the order they are sent."""
    initialize = {
        "protocolVersion": PROTOCOL_VERSION, "capabilities": {},
        "clientInfo": {"name": "octomem-startup-bench", "version": "1"},
    }
    recall = {"name": "recall", "arguments": {"query": "which shell does the user prefer"}}
    remember = {"name": "remember", "arguments": {"text": "The user prefers zsh", "kind": "FACT"}}
    return [("initialize", {"method": "initialize", "params": initialize}),
            ("tools/list", {"method": "tools/list", "params": {}}),
            ("recall", {"method": "tools/call", "params": recall}),
            ("remember", {"method": "tools/call", "params": remember})]


def _record(run: StartupRun, step: str, answer: dict[str, Any], seconds: float) -> None:
    run.seconds[step] = round(seconds, 4)
    result = answer.get("result") or {}
    if "error" in answer:
        run.errors[step] = str(answer["error"].get("message"))
    elif result.get("isError"):
        run.errors[step] = " ".join(c.get("text", "") for c in result.get("content", []))


def _record_status(run: StartupRun, answer: dict[str, Any]) -> None:
    """Record ``status``'s ``semantic_available`` (untimed, after the measured steps)."""
    content = (answer.get("result") or {}).get("structuredContent")
    if isinstance(content, dict):
        run.semantic_available = content.get("semantic_available")


def environment(home: Path, data: Path) -> dict[str, str]:
    """Return the server's environment: every user directory under ``home``, offline."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OCTOMEM_", "XDG_"))}
    env.update(
        HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"), XDG_CACHE_HOME=str(home / ".cache"),
        HF_HUB_OFFLINE="1", OCTOMEM_DATA_DIR=str(data),
    )
    return env


def measure_once(
    mode: str, home: Path, work: Path, python: str = sys.executable,
    extra_env: dict[str, str] | None = None,
) -> StartupRun:
    """Start the server once and time its first answers.

    :param mode: label stored in the run (``cold`` or ``warm``).
    :param home: the server's ``HOME`` (its user cache lives under ``home/.cache``).
    :param work: an empty directory for the project and the data directory.
    :param python: the interpreter that runs ``-m octomem.mcp_server``.
    :param extra_env: more environment variables, e.g. ``OCTOMEM_PIPELINE__EMBEDDER``.
    :returns: the run; a step that timed out or crashed is missing from ``seconds``.
    """
    run = StartupRun(mode)
    project, data = work / "project", work / "data"
    project.mkdir(parents=True)
    with open(work / "server.log", "wb") as log:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [python, "-m", "octomem.mcp_server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=log, cwd=project, env={**environment(home, data), **(extra_env or {})},
        )
        assert proc.stdin is not None and proc.stdout is not None
        lines = _Lines(proc.stdout)
        try:
            for request_id, (step, message) in enumerate(_requests(), start=1):
                _send(proc.stdin, {"id": request_id, **message})
                answer = lines.answer(request_id, time.perf_counter() + ANSWER_TIMEOUT_S)
                _record(run, step, answer, time.perf_counter() - start)
                cpu = cpu_seconds(proc.pid)
                if cpu is not None:
                    run.cpu_seconds[step] = round(cpu, 3)
                if step == "initialize":
                    _send(proc.stdin, {"method": "notifications/initialized"})
            status_id = len(_requests()) + 1  # untimed: is semantic search available?
            _send(proc.stdin, {"id": status_id, "method": "tools/call",
                               "params": {"name": "status", "arguments": {}}})
            _record_status(run, lines.answer(status_id, time.perf_counter() + ANSWER_TIMEOUT_S))
        except (TimeoutError, EOFError) as exc:
            run.errors["server"] = str(exc)
        finally:
            proc.stdin.close()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    return run


def measure(runs: int, python: str = sys.executable) -> list[StartupRun]:
    """Return ``runs`` cold runs, then (after one untimed cache fill) ``runs`` warm runs."""
    results: list[StartupRun] = []
    with tempfile.TemporaryDirectory(prefix="octomem-startup-") as tmp:
        root = Path(tmp)
        for i in range(runs):
            results.append(measure_once("cold", root / f"cold{i}" / "home", root / f"cold{i}",
                                        python))
        warm_home = root / "warm-home"
        measure_once("fill", warm_home, root / "fill", python)
        for i in range(runs):
            results.append(measure_once("warm", warm_home, root / f"warm{i}", python))
    return results


def main(argv: list[str] | None = None) -> int:
    """Measure and write ``report.md`` and ``report.json`` under ``--out``."""
    parser = bench_parser("mcp_startup", __doc__)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/mcp"))
    parser.add_argument("--runs", type=at_least(1), default=7, help="runs per mode (default 7)")
    parser.add_argument("--label", default="", help="what was measured, e.g. a commit")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    runs = measure(args.runs)
    paths = write_report(runs, args.out, label=args.label,
                         load=(load_before, os.getloadavg()[0]))
    for path in paths:
        print(path)
    failed = [r for r in runs if r.errors or len(r.seconds) < len(STEPS)]
    return 1 if failed else 0


if __name__ == "__main__":
    run_main(main, "python -m octomem.benchmarks.mcp_startup")
