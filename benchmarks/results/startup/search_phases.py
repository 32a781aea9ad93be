"""Where a fresh ``octomem search`` spends its time, phase by phase, on the calling thread.

``python benchmarks/results/startup/search_phases.py PROJECT --global-root GLOBAL
--rounds 9 [--before DIR]`` runs ``octomem search QUERY`` over ``PROJECT`` in fresh
processes (with ``--before``, alternately with another checkout put first on
``PYTHONPATH``). Each process imports the libraries first, each group timed (typer, rich,
pluggy and apsw; pydantic's ``BaseModel``; pydantic's first model, which also imports
its field machinery and ``importlib.metadata`` and scans every installed distribution's
entry points for pydantic plugins), then octomem's CLI and engine modules, then runs the
console entry point with marks around the command's steps: typer parsing the command line
and building ``search``, reading the settings, loading the plugins (entry points and
their modules), opening both scopes, starting the query's embedding, the keyword arm
(with numpy's import, which the arms need), the vector arm's restore from its snapshots
while the model loads, the wait for the embedding, the searches, fusion, the rest of the
recall, printing, closing and the exit handlers. The embedder's ``load()`` (the model
load, on its worker) is timed apart.

Each phase's median wall time and the calling thread's CPU time (``time.thread_time``,
steadier than wall times on a loaded machine), ms; the model load's wall and its
thread's CPU; the 1-minute load average. The imports and the searches are the
console script's own; the query rotates over six questions, as
``octomem.benchmarks.cli_search``'s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

QUERIES = ("effects of vitamin D on bone density", "what did Caroline say about the adoption",
           "gene expression in tumour cells", "where did Melanie go camping last summer",
           "antibiotic resistance in hospitals", "which book did John recommend")

#: The measured process: argv[1] the parent's time.time() at the spawn, then octomem's
#: arguments. Prints {"phases": [[name, wall ms, cpu ms], ...], "loads": [...]} on stderr.
PROBE = r'''
import json, os, sys, threading, time
T0, marks = float(sys.argv[1]), []
def mark(name):
    marks.append((name, time.time() - T0, time.thread_time()))
mark("interpreter start")
import importlib.util
QUICK = importlib.util.find_spec("octomem.engine.cli.quick") is not None
import apsw, pluggy, rich.console
if not QUICK:  # since issue 15's sixth round a plain search imports no typer
    import typer
mark("import typer (before the quick path), rich, pluggy, apsw")
from pydantic import BaseModel
mark("import pydantic.BaseModel")
class _First(BaseModel):
    x: int = 0
mark("pydantic's first model (fields, plugin scan)")
from octomem.engine.cli import entry
if QUICK:
    from octomem.engine.cli import searching as commands  # where close_memory is called
else:
    from octomem.engine.cli import commands
mark("octomem's CLI modules")
from octomem.engine import manager, settings
from octomem.engine.memory import facade, recall as rc
mark("octomem's engine modules")
from octomem.plugins.fastembed import embedder as fe
loads = []
def timed(real):
    def load(self):
        start, cpu = time.time() - T0, time.thread_time()
        real(self)
        loads.append((start, time.time() - T0, time.thread_time() - cpu))
    return load
fe.FastembedEmbedder.load = timed(fe.FastembedEmbedder.load)
def after(name, real, first=None):
    def wrapper(*args, **kwargs):
        if first:
            mark(first)
        out = real(*args, **kwargs)
        mark(name)
        return out
    return wrapper
facade.load_settings = after("read the settings", facade.load_settings,
                             "parse (typer before the quick path), build `search`")
facade.load_registry = after("load the plugins", facade.load_registry)
facade.Memory.__init__ = after("open both scopes", facade.Memory.__init__)
for name, label in (("start_embedding", "start the embedding"),
                    ("keyword_runs", "keyword arm (numpy imported)"),
                    ("prepare_semantic", "vector arm: restore, prefault"),
                    ("embedding", "wait for the embedding"),
                    ("search_scopes", "searches"), ("fuse_scopes", "fusion")):
    setattr(rc, name, after(label, getattr(rc, name)))
facade.Memory.recall = after("rest of the recall", facade.Memory.recall)
close = entry.close_memory
def close_memory(memory):
    mark("print")
    close(memory)
    mark("close")
commands.close_memory = close_memory
real_exit = os._exit
def end(code):
    mark("exit handlers")
    rows, prev = [], (0.0, 0.0)
    for name, wall, cpu in marks:
        rows.append((name, (wall - prev[0]) * 1e3, (cpu - prev[1]) * 1e3))
        prev = (wall, cpu)
    print(json.dumps({"phases": rows, "loads": loads}), file=sys.stderr)
    sys.stderr.flush()
    real_exit(code)
os._exit = end
sys.argv = ["octomem", *sys.argv[2:]]
from octomem.engine.cli import main
import __main__
__main__.main = main
main()
'''


def run_once(argv: list[str], env: dict[str, str]) -> dict[str, list]:
    """Run one measured search; return its phases and model loads.

    :raises SystemExit: the search failed (its output is shown).
    """
    done = subprocess.run([sys.executable, "-c", PROBE, repr(time.time()), *argv],
                          capture_output=True, text=True, env=env, check=False)
    try:
        return json.loads(done.stderr.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise SystemExit(f"the search failed: {done.stdout}{done.stderr}") from None


def table(runs: list[dict[str, list]]) -> list[str]:
    """Markdown rows: each phase's median wall and CPU (ms), then the totals."""
    lines = []
    for i, (name, _, _) in enumerate(runs[0]["phases"]):
        wall = statistics.median(r["phases"][i][1] for r in runs)
        cpu = statistics.median(r["phases"][i][2] for r in runs)
        lines.append(f"| {name} | {wall:.0f} | {cpu:.0f} |")
    total = statistics.median(sum(p[2] for p in r["phases"]) for r in runs)
    lines.append(f"| **calling thread, all phases** | | **{total:.0f}** |")
    # per process, summed: a search calls load() twice (the second returns at once)
    model = [sum(end - start for start, end, _ in r["loads"]) * 1e3 for r in runs]
    model_cpu = [sum(cpu for _, _, cpu in r["loads"]) * 1e3 for r in runs]
    if any(model):
        lines.append(f"| model load (its worker: `load()`) | {statistics.median(model):.0f} "
                     f"| {statistics.median(model_cpu):.0f} |")
    return lines


def main() -> None:
    """Parse the command line, measure, print a Markdown table per checkout."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("project", type=Path)
    parser.add_argument("--global-root", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--before", type=Path, help="PYTHONPATH entry of another checkout")
    args = parser.parse_args()
    base = {**os.environ, "COLUMNS": "100"}
    variants = {"this checkout": base}
    if args.before:
        variants["before"] = {**base, "PYTHONPATH": str(args.before)}
    runs: dict[str, list[dict[str, list]]] = {name: [] for name in variants}
    load = [os.getloadavg()[0]]
    for round_ in range(args.rounds + 1):  # the first round writes bytecode, uncounted
        order = list(variants.items())
        for name, env in order if round_ % 2 else order[::-1]:
            argv = ["--project-root", str(args.project), "--global-root",
                    str(args.global_root), "search", QUERIES[round_ % len(QUERIES)]]
            result = run_once(argv, env)
            if round_:
                runs[name].append(result)
    load.append(os.getloadavg()[0])
    for name, rows in runs.items():
        print(f"\n{name}\n\n| phase | wall ms | CPU ms (calling thread) |\n|---|---:|---:|")
        print("\n".join(table(rows)))
    print(f"\n{args.rounds} rounds, alternated; load average (1 min) {load[0]:.2f} before, "
          f"{load[1]:.2f} after; {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
