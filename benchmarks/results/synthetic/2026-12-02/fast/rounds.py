"""Alternate :mod:`one` between this checkout and a "before" package view, in fresh
processes, and print each round and the median of the after/before ratios. Usage, from
the repository root::

    python benchmarks/results/synthetic/2026-12-02/fast/rounds.py STORE N ROUNDS BEFORE [AFTER]

``BEFORE``: a folder holding ``octomem/`` whose ``engine``, ``plugins``,
``benchmarks`` and ``mcp_server`` link to an older checkout's folders (put first on
``PYTHONPATH``); the same venv runs both. ``AFTER``: the same for the "after" side
(default: this checkout, as installed).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ONE = Path(__file__).with_name("one.py")


def run(store: str, n: str, before: str | None) -> dict[str, object]:
    """Run :mod:`one` once, on ``before`` when given, and return its JSON line."""
    env = dict(os.environ)
    if before:
        env["PYTHONPATH"] = before + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, str(ONE), store, n], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    """Print every round and the median ratios."""
    store, n, rounds, before = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    after = sys.argv[5] if len(sys.argv) > 5 else None
    ratios: dict[str, list[float]] = {k: [] for k in (
        "wall_p50", "thread_cpu_p50", "post_arms_cpu_p50", "process_cpu_p50")}
    for i in range(rounds):
        pair = {}
        for side in (("before", "after") if i % 2 == 0 else ("after", "before")):
            pair[side] = run(store, n, before if side == "before" else after)
            print(side, json.dumps(pair[side]), flush=True)
        for key, values in ratios.items():
            values.append(pair["after"][key] / pair["before"][key])  # type: ignore[operator]
        print("same answers:", pair["after"]["digest"] == pair["before"]["digest"], flush=True)
    print("after/before, median of rounds:",
          {k: round(statistics.median(v), 3) for k, v in ratios.items()},
          "all rounds:", {k: [round(x, 3) for x in v] for k, v in ratios.items()})


if __name__ == "__main__":
    main()
