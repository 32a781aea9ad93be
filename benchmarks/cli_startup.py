"""How long a fresh ``octomem --help`` (and ``status``, ``config``) takes, as a ratio to a
bare interpreter's start.

Each round runs, in a fresh process each and in turn (so the machine's load hits all alike):
``python -c pass``; two floors (importing the rich parts the help pages use; importing
typer); ``octomem --help``, ``octomem status --help``, ``octomem search --help``,
``octomem status`` and ``octomem config`` of this install (``status`` over the stores of
the current directory and ``HOME``; ``--commands`` picks which); and, with ``--before
DIR``, the same commands of another checkout put first on ``PYTHONPATH`` (a folder holding
``octomem/`` with its ``engine``, ``plugins``, ... linked to that checkout).
Bytecode is written (``PYTHONDONTWRITEBYTECODE`` removed) and one round is run first and
not counted, so every variant starts from cached ``.pyc`` files as an installed package
does. Reports the median wall time of each and its ratio to ``python -c pass``, with the
load average before and after. Run: ``python -m octomem.benchmarks.cli_startup --rounds 30``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from .arguments import at_least, bench_parser, existing_dir, run_main

HELP = ("import sys; from octomem.engine.cli import main; "
        "sys.argv = ['octomem', *sys.argv[1:]]; main()")
#: What the help pages import from rich (:mod:`octomem.engine.cli.helpview`).
RICH_FLOOR = "import rich.console, rich.table, rich.panel, rich.padding, rich.align"
TYPER_FLOOR = "import typer"
#: The octomem commands that can be timed (each also from ``--before``'s checkout).
COMMANDS = {"help": ("--help",), "status-help": ("status", "--help"),
            "search-help": ("search", "--help"), "status": ("status",), "config": ("config",)}


def variants(before: Path | None, chosen: list[str]) -> dict[str, tuple[list[str], dict[str, str]]]:
    """Return ``name -> (argv, extra environment)`` for every measured command."""
    py, env = sys.executable, {}
    out = {"python -c pass": ([py, "-c", "pass"], env),
           "rich (floor)": ([py, "-c", RICH_FLOOR], env),
           "typer (floor)": ([py, "-c", TYPER_FLOOR], env)}
    for key in chosen:
        out[f"octomem {' '.join(COMMANDS[key])}"] = ([py, "-c", HELP, *COMMANDS[key]], env)
    if before is not None:
        old = {"PYTHONPATH": str(before)}
        for key in chosen:
            out[f"before: octomem {' '.join(COMMANDS[key])}"] = (
                [py, "-c", HELP, *COMMANDS[key]], old)
    return out


def measure(rounds: int, before: Path | None, chosen: list[str]) -> dict[str, list[float]]:
    """Run every variant ``rounds`` times, interleaved, after one uncounted round; return
    wall seconds per variant.

    :raises subprocess.CalledProcessError: a variant exits with an error.
    """
    runs = variants(before, chosen)
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    times: dict[str, list[float]] = {name: [] for name in runs}
    for round_ in range(rounds + 1):
        for name, (argv, extra) in runs.items():
            start = time.perf_counter()
            subprocess.run(argv, env={**base, **extra, "COLUMNS": "100"}, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if round_:  # the first round writes the bytecode caches
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


def main(argv: list[str] | None = None) -> None:
    """Parse the command line, measure, print the table."""
    parser = bench_parser("cli_startup", __doc__)
    parser.add_argument("--rounds", type=at_least(1), default=20)
    parser.add_argument("--before", type=existing_dir, help="PYTHONPATH entry of an older checkout")
    parser.add_argument("--commands", default=",".join(COMMANDS),
                        help=f"which to time, comma-separated, of {', '.join(COMMANDS)}")
    args = parser.parse_args(argv)
    chosen = [c for c in args.commands.split(",") if c]
    unknown = sorted(set(chosen) - set(COMMANDS))
    if unknown:
        parser.error(f"--commands: unknown {', '.join(unknown)} (known: {', '.join(COMMANDS)})")
    first = os.getloadavg()[0]
    times = measure(args.rounds, args.before, chosen)
    print(report(times, (first, os.getloadavg()[0])))


if __name__ == "__main__":
    run_main(main, "python -m octomem.benchmarks.cli_startup")
