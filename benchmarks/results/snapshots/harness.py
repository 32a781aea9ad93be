"""Harness of the snapshot report (issue 15): a fresh CLI ``octomem search`` and a fresh
process's warm-up at 100k chunks, with and without snapshots of the in-RAM copies.

``prepare SRC PROJECT``: copies an octomem store (``SRC``, e.g. one built from the realistic
scale-curve texts) to ``PROJECT/.octomem/octomem.sqlite3`` and labels its vector set as the
configured embedder's (so the CLI's query vector is searched against it; the vectors' values
only matter for quality, not for time).

``cli PROJECT --rounds N``: per round, in turn, a fresh ``octomem search`` with snapshots
switched off (``--set arms.sqlite.snapshots=false``: the copies are not in RAM, vec0 and FTS5
answer) and one with the snapshots present (restored, then numpy scans). Each run wraps the
embedder's ``load`` to time the model load apart; prints the median wall, model load and
wall minus model load of each.

``arms PROJECT --rounds N``: per round, in turn, a fresh process with snapshots off and one
with them on, each timing its first keyword and vector searches (no query embedding: a
seeded random vector), a second of each, and each under a 10 % metadata filter.

``server PROJECT --rounds N``: per round, in turn, a fresh process that opens the memory and
warms the local scope (what ``octomem serve`` does after start) with and without snapshots,
then answers one recall: the warm-up seconds and the first recall's ms (the model loaded
before, timed apart). The first run with snapshots on writes them if they are missing.

Run from the repository root with the venv's python, e.g.
``nice -n 5 python benchmarks/results/snapshots/harness.py cli /tmp/p100k --rounds 7``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

QUERIES = ("effects of vitamin D on bone density", "what did Caroline say about the adoption",
           "gene expression in tumour cells", "where did Melanie go camping last summer",
           "antibiotic resistance in hospitals", "which book did John recommend")

CLI_PROBE = """
import json, sys, time
t0 = time.perf_counter()
from octomem.plugins.fastembed import embedder as fe
loads = []
real = fe.FastembedEmbedder.load
def timed(self):
    start = time.perf_counter(); real(self); loads.append(time.perf_counter() - start)
fe.FastembedEmbedder.load = timed
sys.argv = ["octomem", *json.loads(sys.argv[1])]
from octomem.engine.cli import main
try:
    main()
except SystemExit:
    pass
print(json.dumps({"model_load": sum(loads), "inside": time.perf_counter() - t0}), file=sys.stderr)
"""

ARMS_PROBE = """
import json, sys, time
from pathlib import Path
import numpy as np
from octomem.engine.memory.facade import open_memory
from octomem.engine.types import Filters
snap = sys.argv[2] == "on"
memory = open_memory(overrides={"arms": {"sqlite": {"snapshots": snap}}},
                     project_root=Path(sys.argv[1]))
pipeline = memory.scopes.get("local")
query = np.random.default_rng(int(sys.argv[3])).standard_normal(384).astype(np.float32)
query /= np.linalg.norm(query)
tenth = Filters(metadata={"group": "g3"})
steps = (("first keyword", lambda: pipeline.arms.keyword.search(sys.argv[4], Filters(), 40)),
         ("first vector", lambda: pipeline.arms.semantic.search(query, Filters(), 40)),
         ("second keyword", lambda: pipeline.arms.keyword.search("bone density", Filters(), 40)),
         ("second vector", lambda: pipeline.arms.semantic.search(-query, Filters(), 40)),
         ("keyword, 10 % filter", lambda: pipeline.arms.keyword.search(sys.argv[4], tenth, 40)),
         ("vector, 10 % filter", lambda: pipeline.arms.semantic.search(query, tenth, 40)))
out = {}
for name, step in steps:
    start = time.perf_counter(); step(); out[name] = (time.perf_counter() - start) * 1e3
memory.close()
print(json.dumps(out), file=sys.stderr)
"""

SERVER_PROBE = """
import json, sys, time
t0 = time.perf_counter()
from pathlib import Path
from octomem.engine.memory.facade import open_memory
project, snapshots = Path(sys.argv[1]), sys.argv[2] == "on"
memory = open_memory(overrides={"arms": {"sqlite": {"snapshots": snapshots}}}, project_root=project)
pipeline = memory.scopes.get("local")
start = time.perf_counter(); pipeline.arms.embedder.load(); model = time.perf_counter() - start
start = time.perf_counter(); pipeline.warm(); warm = time.perf_counter() - start
start = time.perf_counter()
answer = memory.recall(sys.argv[3])
first = time.perf_counter() - start
answered = time.perf_counter() - t0
start = time.perf_counter()
memory.recall(sys.argv[3] + " again")
second = time.perf_counter() - start
state = pipeline.arms.semantic._matrices[pipeline.arms.semantic.bound.table].snapshot
if state.saving is not None:
    state.saving.join()
for state in (pipeline.arms.keyword.postings.snapshot, pipeline.arms.storage.fields.snapshot):
    if state.saving is not None:
        state.saving.join()
memory.close()
print(json.dumps({"model_load": model, "warm": warm, "first_ms": first * 1e3, "answered": answered,
                  "second_ms": second * 1e3, "origin": state.origin, "hits": len(answer.hits)}),
      file=sys.stderr)
"""


def prepare(src: Path, project: Path) -> None:
    """Copy the store into ``project``'s local scope, its vector set labelled as the
    configured embedder's."""
    import apsw

    from octomem.plugins.fastembed.embedder import FastembedEmbedder

    scope = project / ".octomem"
    scope.mkdir(parents=True, exist_ok=True)
    target = scope / "octomem.sqlite3"
    shutil.copyfile(src, target)
    conn = apsw.Connection(str(target))
    model = FastembedEmbedder().model_id
    with conn:
        conn.execute("UPDATE vector_sets SET model_id = ?", (model,))
    conn.close()
    print(f"{target}: vector set labelled {model}")


def _run(code: str, args: list[str]) -> tuple[float, dict[str, float]]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          check=True, env={**os.environ, "COLUMNS": "100"})
    wall = time.perf_counter() - start
    if "Error" in done.stdout or "Error:" in done.stderr:
        raise SystemExit(f"the measured command failed: {done.stdout}{done.stderr}")
    return wall, json.loads(done.stderr.strip().splitlines()[-1])


def cli(project: Path, rounds: int) -> None:
    """Time fresh CLI searches with and without snapshots, interleaved."""
    rows: dict[str, list[tuple[float, float]]] = {"without snapshots": [], "with snapshots": []}
    floor: list[float] = []
    load = [os.getloadavg()[0]]
    for i in range(rounds):
        query = QUERIES[i % len(QUERIES)]
        floor.append(_run("import sys; print('{}', file=sys.stderr)", [])[0])
        for name, extra in (("without snapshots", ["--set", "arms.sqlite.snapshots=false"]),
                            ("with snapshots", [])):
            argv = ["--project-root", str(project), "--set", "retrieval.relevance_floor=0",
                    "--set", "retrieval.document_relevance_floor=0", *extra, "search", query,
                    "--scope", "local"]
            wall, inner = _run(CLI_PROBE, [json.dumps(argv)])
            rows[name].append((wall, inner["model_load"]))
    load.append(os.getloadavg()[0])
    print("| fresh `octomem search` at 100k | wall ms | model load ms | wall − model load ms |")
    print("|---|---:|---:|---:|")
    for name, runs in rows.items():
        wall = statistics.median(w for w, _ in runs) * 1e3
        model = statistics.median(m for _, m in runs) * 1e3
        rest = statistics.median(w - m for w, m in runs) * 1e3
        print(f"| {name} | {wall:.0f} | {model:.0f} | {rest:.0f} |")
    print(f"| `python -c pass` (same run) | {statistics.median(floor) * 1e3:.0f} | | |")
    print(f"\n{rounds} rounds, interleaved; load average (1 min) {load[0]:.2f} before, "
          f"{load[1]:.2f} after")


def arms(project: Path, rounds: int) -> None:
    """Time a fresh process's first arm searches (no embedding) with and without snapshots."""
    rows: dict[str, list[dict[str, float]]] = {"off": [], "on": []}
    load = [os.getloadavg()[0]]
    for i in range(rounds):
        for name in ("off", "on"):
            _, inner = _run(ARMS_PROBE, [str(project), name, str(i), QUERIES[i % len(QUERIES)]])
            rows[name].append(inner)
    load.append(os.getloadavg()[0])
    steps = list(rows["off"][0])
    print("| search of a fresh process at 100k (ms) | without snapshots | with snapshots |")
    print("|---|---:|---:|")
    for step in steps:
        off = statistics.median(r[step] for r in rows["off"])
        on = statistics.median(r[step] for r in rows["on"])
        print(f"| {step} | {off:.1f} | {on:.1f} |")
    print(f"\n{rounds} rounds, interleaved; load average (1 min) {load[0]:.2f} before, "
          f"{load[1]:.2f} after")


def server(project: Path, rounds: int, modes: tuple[str, ...] = ("off", "on")) -> None:
    """Time a fresh process's warm-up and first recall with and without snapshots
    (``modes``: only ``("on",)`` at 1M, where a whole load takes minutes)."""
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in modes}
    load = [os.getloadavg()[0]]
    for i in range(rounds):
        for name in modes:
            wall, inner = _run(SERVER_PROBE, [str(project), name, QUERIES[i % len(QUERIES)]])
            rows[name].append({**inner, "wall": wall})
    load.append(os.getloadavg()[0])
    print("| snapshots | process wall s | first answer s | model load s | warm-up s | "
          "first recall ms | second recall ms | copies from |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    keys = ("wall", "answered", "model_load", "warm", "first_ms", "second_ms")
    for name, runs in rows.items():
        for run in runs:  # every run too: the first one with snapshots on may write them
            print(f"| {name} (one run) | {run['wall']:.2f} | {run['answered']:.2f} | "
                  f"{run['model_load']:.2f} | {run['warm']:.2f} | {run['first_ms']:.0f} | "
                  f"{run['second_ms']:.0f} | {run['origin']} |")
        med = {k: statistics.median(r[k] for r in runs) for k in keys}
        print(f"| {name} | {med['wall']:.2f} | {med['answered']:.2f} | {med['model_load']:.2f} "
              f"| {med['warm']:.2f} | {med['first_ms']:.0f} | {med['second_ms']:.0f} "
              f"| {runs[-1]['origin']} |")
    print(f"\n{rounds} rounds, interleaved; load average (1 min) {load[0]:.2f} before, "
          f"{load[1]:.2f} after")


def main() -> None:
    """Parse the command line and run one step."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="step", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("src", type=Path)
    p.add_argument("project", type=Path)
    for step in ("cli", "arms", "server"):
        s = sub.add_parser(step)
        s.add_argument("project", type=Path)
        s.add_argument("--rounds", type=int, default=5)
        if step == "server":
            s.add_argument("--only-on", action="store_true",
                           help="only processes with snapshots on (1M: no whole loads)")
    args = parser.parse_args()
    if args.step == "prepare":
        prepare(args.src, args.project)
    elif args.step == "cli":
        cli(args.project, args.rounds)
    elif args.step == "arms":
        arms(args.project, args.rounds)
    else:
        server(args.project, args.rounds, ("on",) if args.only_on else ("off", "on"))


if __name__ == "__main__":
    main()
