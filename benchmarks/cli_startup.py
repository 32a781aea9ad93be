"""How long a fresh ``octomem --help`` (and ``status``, ``config``) takes, as a ratio to a
bare interpreter's start.

Each round runs, in a fresh process each and in turn (so the machine's load hits all alike):
``python -c pass``; the floor ``--help`` cannot go below (typer and its rich help renderer
imported); ``octomem --help``, ``octomem status --help``, ``octomem status`` and ``octomem
config`` of this install (``status`` over the stores of the current directory and ``HOME``);
and, with ``--before DIR``, the same commands of another checkout put first on
``PYTHONPATH`` (a folder holding ``octomem/`` with its ``engine``, ``plugins``, ... linked
to that checkout).
Reports the median wall time of each and its ratio to ``python -c pass``, with the load
average before and after. Run: ``python -m octomem.benchmarks.cli_startup --rounds 30``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HELP = "import sys; from octomem.engine.cli import main; sys.argv = ['octomem', *sys.argv[1:]]; main()"
FLOOR = "import typer, typer.rich_utils"
#: The octomem commands timed (each also from ``--before``'s checkout).
COMMANDS = (("--help",), ("status", "--help"), ("status",), ("config",))


def variants(before: Path | None) -> dict[str, tuple[list[str], dict[str, str]]]:
    """Return ``name -> (argv, extra environment)`` for every measured command."""
    py, env = sys.executable, {}
    out = {"python -c pass": ([py, "-c", "pass"], env),
           "typer + rich help (floor)": ([py, "-c", FLOOR], env)}
    for args in COMMANDS:
        out[f"octomem {' '.join(args)}"] = ([py, "-c", HELP, *args], env)
    if before is not None:
        old = {"PYTHONPATH": str(before)}
        for args in COMMANDS:
            out[f"before: octomem {' '.join(args)}"] = ([py, "-c", HELP, *args], old)
    return out


def measure(rounds: int, before: Path | None) -> dict[str, list[float]]:
    """Run every variant ``rounds`` times, interleaved; return wall seconds per variant.

    :raises subprocess.CalledProcessError: a variant exits with an error.
    """
    runs = variants(before)
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, (argv, extra) in runs.items():
            start = time.perf_counter()
            subprocess.run(argv, env={**os.environ, **extra, "COLUMNS": "100"}, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[name].append(time.perf_counter() - start)
    return times


def report(times: dict[str, list[float]], load: tuple[float, float]) -> str:
    """Return a Markdown table: median and p90 wall ms, ratio of medians to ``-c pass``."""
    base = statistics.median(times["python -c pass"])
    rows = ["| command | median ms | p90 ms | ÷ `python -c pass` |", "|---|---:|---:|---:|"]
    for name, walls in times.items():
        walls = sorted(walls)
        p90 = walls[min(len(walls) - 1, int(0.9 * len(walls)))]
        rows.append(f"| {name} | {statistics.median(walls) * 1e3:.0f} | {p90 * 1e3:.0f} | "
                    f"{statistics.median(walls) / base:.1f}× |")
    rows.append(f"\n{len(next(iter(times.values())))} rounds, interleaved; load average "
                f"(1 min) {load[0]:.2f} before, {load[1]:.2f} after; {sys.version.split()[0]}")
    return "\n".join(rows)


def main() -> None:
    """Parse the command line, measure, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--before", type=Path, help="PYTHONPATH entry of an older checkout")
    args = parser.parse_args()
    first = os.getloadavg()[0]
    times = measure(args.rounds, args.before)
    print(report(times, (first, os.getloadavg()[0])))


if __name__ == "__main__":
    main()
