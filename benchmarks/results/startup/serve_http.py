"""When does ``octomem serve --http`` listen, against when ``octomem serve`` (stdio) answers?

``python benchmarks/results/startup/serve_http.py --rounds 5`` spawns, alternately, the
stdio server (timed from just before the spawn to the answer to ``initialize``, written at
once) and the HTTP server on ``127.0.0.1:0`` (timed to its ``MCP over streamable HTTP at``
line on stderr, then to the answer to the same ``initialize`` POSTed to that URL), each
with a fresh project and data folder and the packaged defaults (the model loads in the
background in both). Prints the medians, every round and the 1-minute load average
before and after, as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

OCTOMEM = str(Path(sys.executable).with_name("octomem"))
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "serve_http.py", "version": "0"}}}


def _spawn(args: list[str], root: Path, **pipes: int) -> subprocess.Popen[bytes]:
    (root / "project").mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "OCTOMEM_DATA_DIR": str(root / "data"), "HF_HUB_OFFLINE": "1"}
    return subprocess.Popen([OCTOMEM, "serve", "--project-root", str(root / "project"),
                             *args], env=env, **pipes)  # type: ignore[call-overload]


def stdio(root: Path) -> float:
    """Seconds from the spawn to the answer to ``initialize`` over stdio."""
    start = time.perf_counter()
    proc = _spawn([], root, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                  stderr=subprocess.DEVNULL)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((json.dumps(INIT) + "\n").encode())
    proc.stdin.flush()
    proc.stdout.readline()
    took = time.perf_counter() - start
    proc.kill()
    proc.wait()
    return took


def http(root: Path) -> tuple[float, float]:
    """Seconds from the spawn to the listening line, and to the answer to ``initialize``."""
    start = time.perf_counter()
    proc = _spawn(["--http", "127.0.0.1:0"], root, stdin=subprocess.DEVNULL,
                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    for raw in proc.stderr:
        found = re.search(r"at (http://\S+/mcp)", raw.decode())
        if found:
            break
    else:
        raise SystemExit("the HTTP server ended before it listened")
    listening = time.perf_counter() - start
    request = urllib.request.Request(found.group(1), data=json.dumps(INIT).encode(), headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    urllib.request.urlopen(request, timeout=120).read()
    answered = time.perf_counter() - start
    proc.kill()
    proc.wait()
    return listening, answered


def main() -> None:
    """Parse ``--rounds``, measure alternately, print JSON."""
    parser = argparse.ArgumentParser(prog="python benchmarks/results/startup/serve_http.py",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds of each (default 5)")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error(f"argument --rounds: must be at least 1, got {args.rounds}")
    times: dict[str, list[float]] = {"stdio_initialize_s": [], "http_listening_s": [],
                                     "http_initialize_s": []}
    load_before = os.getloadavg()
    for _ in range(args.rounds):
        root = Path(tempfile.mkdtemp(prefix="octomem-serve-"))
        try:
            times["stdio_initialize_s"].append(stdio(root / "stdio"))
            listening, answered = http(root / "http")
        finally:
            shutil.rmtree(root, ignore_errors=True)
        times["http_listening_s"].append(listening)
        times["http_initialize_s"].append(answered)
    print(json.dumps({
        **{k: {"median": round(statistics.median(v), 2), "rounds": [round(x, 2) for x in v]}
           for k, v in times.items()},
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count()},
        indent=1))


if __name__ == "__main__":
    main()
