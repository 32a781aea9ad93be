"""How long a fresh ``octomem search`` takes over a large store, the model load apart
(issue 15: a fresh CLI search at 100k chunks ≤ 0.5 s, model load reported apart).

Each round runs, in a fresh process each and in turn (so the machine's load hits all
alike; the searches' order reversed every other round): ``python -c pass``, importing the
libraries a search uses besides the model's (the floor of the rest: rich,
pydantic.BaseModel, pluggy, numpy, apsw; pydantic-settings only when ``OCTOMEM_*``
variables are set, since issue 15's third round; typer until its sixth),
then ``octomem search QUERY`` over ``PROJECT`` (its local scope; the global scope an empty
folder) with the snapshots of the in-RAM copies used,
and, with ``--no-snapshots``, the same with ``arms.sqlite.snapshots=false``; with
``--before DIR``, the same search from another checkout put first on ``PYTHONPATH``.
The measured process wraps the embedder's ``load`` (the model load: importing
onnxruntime and tokenizers, reading the tokenizer and the ONNX file, building the
session; numpy only when the loading thread imports it before the arms do) and the
command's steps, and reports when each began and ended. Bytecode is written and one round runs
first uncounted, so every process starts from cached ``.pyc`` files.

Reports medians of: the wall time; the model load; the wall time less the model load;
the CPU time (user + system) of the process less the loading thread's CPU time during
the model load (steadier than wall times on a loaded machine, where every process waits
for a core); and the steps of the wall time less the model load: start (interpreter
start, imports, parsing the command line), open (settings, plugins, both scopes
opened), recall less the model load (query embedding, both arms, fusion, ranking), and
the end (printing, the note on unembedded chunks, closing, exit). Run:
``nice -n 5 python -m octomem.benchmarks.cli_search PROJECT --rounds 7``.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from .arguments import at_least, bench_parser, existing_dir, run_main

QUERIES = ("effects of vitamin D on bone density", "what did Caroline say about the adoption",
           "gene expression in tumour cells", "where did Melanie go camping last summer",
           "antibiotic resistance in hospitals", "which book did John recommend")

#: The measured process: the console entry point, with the model load and the command's
#: steps timed (seconds since the process's first line).
PROBE = """
import json, sys, time
t0 = float(sys.argv[2])  # when the parent started this process (time.time())
marks, loads = {}, []
from octomem.plugins.fastembed import embedder as fe
real_load = fe.FastembedEmbedder.load
def load(self):
    start, cpu = time.time() - t0, time.thread_time()
    real_load(self)
    loads.append((start, time.time() - t0, time.thread_time() - cpu))
fe.FastembedEmbedder.load = load
import importlib.util
if importlib.util.find_spec("octomem.engine.cli.searching") is not None:
    # since issue 15's sixth round a plain search runs without typer: importing the
    # commands module (typer) here would add what the search no longer does
    from octomem.engine.cli import searching as where
    name = "command_memory"
else:
    from octomem.engine.cli import commands as where
    name = "_memory"
real_memory = getattr(where, name)
def memory():
    marks["open"] = time.time() - t0
    opened = real_memory()
    marks["opened"] = time.time() - t0
    real_recall = opened.recall
    def recall(*args, **kwargs):
        marks["recall"] = time.time() - t0
        try:
            return real_recall(*args, **kwargs)
        finally:
            marks["recalled"] = time.time() - t0
    opened.recall = recall
    return opened
setattr(where, name, memory)
sys.argv = ["octomem", *json.loads(sys.argv[1])]
from octomem.engine.cli import main
try:
    main()
except SystemExit as exc:
    marks["status"] = exc.code or 0
marks["end"] = time.time() - t0
print(json.dumps({"marks": marks, "loads": loads}), file=sys.stderr)
"""
#: Steps of the rest, each ``(name, its length from one round's marks and wall)``.
STEPS = ("start", "open", "recall − model load", "end")
#: The libraries a search imports besides the model's (fastembed, onnxruntime, tokenizers):
#: importing them alone is the floor of the rest (``BaseModel``: ``import pydantic`` alone
#: imports its models' machinery lazily, so until issue 15's fourth round the floor left
#: out 0.06-0.1 s of CPU at load 7-11 that every search pays; pydantic-settings is
#: imported only when ``OCTOMEM_*`` variables are set; typer, since issue 15's sixth
#: round, only when the command line is not a plain search's).
LIBRARIES = "import rich.console, pluggy, numpy, apsw; from pydantic import BaseModel"


def children_cpu() -> float:
    """Return the CPU time (user + system, s) of this process's waited-for children."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run_once(argv: list[str], extra: dict[str, str]) -> dict[str, float]:
    """Run one fresh search; return its wall time, model load and steps in seconds.

    :raises SystemExit: the search failed (its output is shown).
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    start, cpu = time.time(), children_cpu()
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(argv), repr(start)],
                          capture_output=True, text=True, env={**env, **extra, "COLUMNS": "100"},
                          check=False)
    wall, cpu = time.time() - start, children_cpu() - cpu
    try:
        report = json.loads(done.stderr.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise SystemExit(f"the search failed: {done.stdout}{done.stderr}") from None
    marks = report["marks"]
    if marks.get("status", 0) or "recalled" not in marks:
        raise SystemExit(f"the search failed: {done.stdout}{done.stderr}")
    model = sum(end - begin for begin, end, _ in report["loads"])
    model_cpu = sum(used for _, _, used in report["loads"])
    return {"wall": wall, "model load": model, "wall − model load": wall - model,
            "CPU − model load": cpu - model_cpu,
            "start": marks["open"], "open": marks["opened"] - marks["open"],
            "recall − model load": marks["recalled"] - marks["recall"] - model,
            "end": wall - marks["recalled"]}


def measure(project: Path, global_root: Path, rounds: int, snapshots_off: bool,
            before: Path | None) -> tuple[dict[str, list[dict[str, float]]], list[float]]:
    """Run every variant ``rounds`` times, interleaved, after one uncounted round."""
    variants: dict[str, tuple[list[str], dict[str, str]]] = {"with snapshots": ([], {})}
    if snapshots_off:
        variants["without snapshots"] = (["--set", "arms.sqlite.snapshots=false"], {})
    if before is not None:
        variants["before: with snapshots"] = ([], {"PYTHONPATH": str(before)})
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in variants}  # ms each
    floor: list[float] = []
    libraries: list[dict[str, float]] = []
    floor_cpu: list[float] = []
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    for round_ in range(rounds + 1):
        for code in ("pass", LIBRARIES):
            start, cpu = time.perf_counter(), children_cpu()
            subprocess.run([sys.executable, "-c", code], check=True, env=env)
            wall, cpu = time.perf_counter() - start, children_cpu() - cpu
            if round_ and code == "pass":
                floor.append(wall)
                floor_cpu.append(cpu)
            elif round_:
                libraries.append({"wall": wall, "CPU − model load": cpu})
        order = list(variants.items())
        for name, (extra_args, extra_env) in order if round_ % 2 else order[::-1]:
            argv = ["--project-root", str(project), "--global-root", str(global_root),
                    *extra_args, "search", QUERIES[round_ % len(QUERIES)]]
            result = run_once(argv, extra_env)
            if round_:  # the first round writes the bytecode caches
                rows[name].append(result)
    rows["importing the libraries (floor)"] = libraries
    rows["`python -c pass`"] = [{"wall": w, "CPU − model load": c}
                                for w, c in zip(floor, floor_cpu, strict=True)]
    return rows, floor


def report(rows: dict[str, list[dict[str, float]]], floor: list[float], rounds: int,
           load: tuple[float, float]) -> str:
    """Return the Markdown table of medians (ms) and ratios to ``python -c pass``: of the
    wall time less the model load, and of the CPU time less the model load's."""
    base = statistics.median(floor)
    base_cpu = statistics.median(r["CPU − model load"] for r in rows["`python -c pass`"])
    columns = ("wall", "model load", "wall − model load", *STEPS, "CPU − model load")
    lines = ["| fresh `octomem search` | " + " | ".join(f"{c} ms" for c in columns)
             + " | (wall − model load) ÷ `python -c pass` | (CPU − model load) ÷ its CPU |",
             "|---|" + "---:|" * (len(columns) + 2)]
    for name, runs in rows.items():
        med = {c: statistics.median(r[c] for r in runs) * 1e3 for c in columns if c in runs[0]}
        if "model load" not in med:  # a floor: its wall and CPU only
            lines.append(f"| {name} | {med['wall']:.0f} |" + " |" * (len(columns) - 2)
                         + f" {med['CPU − model load']:.0f} | {med['wall'] / (base * 1e3):.1f}× "
                         f"| {med['CPU − model load'] / (base_cpu * 1e3):.1f}× |")
            continue
        lines.append(f"| {name} | " + " | ".join(f"{med[c]:.0f}" for c in columns)
                     + f" | {med['wall − model load'] / (base * 1e3):.1f}× "
                     f"| {med['CPU − model load'] / (base_cpu * 1e3):.1f}× |")
    lines.append(f"\n{rounds} rounds, interleaved; load average (1 min) {load[0]:.2f} before, "
                 f"{load[1]:.2f} after; {sys.version.split()[0]}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Parse the command line, measure, print the table."""
    parser = bench_parser("cli_search", __doc__)
    parser.add_argument("project", type=existing_dir,
                        help="the project whose .octomem/ is searched")
    parser.add_argument("--global-root", type=Path, help="global scope (default: an empty "
                        "folder beside PROJECT)")
    parser.add_argument("--rounds", type=at_least(1), default=7)
    parser.add_argument("--no-snapshots", action="store_true",
                        help="also time the search with arms.sqlite.snapshots=false")
    parser.add_argument("--before", type=existing_dir,
                        help="PYTHONPATH entry of an older checkout")
    args = parser.parse_args(argv)
    global_root = args.global_root or args.project.parent / f"{args.project.name}-global"
    global_root.mkdir(parents=True, exist_ok=True)
    first = os.getloadavg()[0]
    rows, floor = measure(args.project, global_root, args.rounds, args.no_snapshots,
                          args.before)
    print(report(rows, floor, args.rounds, (first, os.getloadavg()[0])))


if __name__ == "__main__":
    run_main(main, "python -m octomem.benchmarks.cli_search")
