"""Would importing the model's libraries ahead help a fresh ``octomem search``? (issue 15,
sixth round; an experiment, not octomem's behaviour.)

``python benchmarks/results/startup/prefetch_ab.py PROJECT GLOBAL ROUNDS`` runs, alternately
in fresh processes, a plain ``octomem search QUERY`` over ``PROJECT`` and the same with a
thread started first thing that imports numpy, onnxruntime (numpy first, as the plugin
does) and tokenizers — what the model's load imports, the only part of it that needs
neither the settings nor the plugins. Prints the medians of each variant's whole wall
time and CPU time (user + system, all threads) and the 1-minute load average.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time

PROBE = r'''
import sys, threading
if sys.argv[1] == "prefetch":
    def ahead():
        from octomem.plugins.fastembed.runtime import import_onnxruntime
        import_onnxruntime()
        import tokenizers
    threading.Thread(target=ahead, daemon=True).start()
sys.argv = ["octomem", "--project-root", sys.argv[2], "--global-root", sys.argv[3], "search",
            sys.argv[4]]
from octomem.engine.cli import main
import __main__
__main__.main = main
main()
'''
QUERIES = ("effects of vitamin D on bone density", "what did Caroline say about the adoption",
           "gene expression in tumour cells", "where did Melanie go camping last summer")


def children_cpu() -> float:
    """CPU seconds (user + system) of this process's waited-for children."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def main() -> None:
    """Run the alternated pairs (one uncounted first round) and print the medians."""
    project, global_root, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    rows: dict[str, list[tuple[float, float]]] = {"plain": [], "prefetch": []}
    load = [os.getloadavg()[0]]
    for round_ in range(rounds + 1):
        for mode in ("plain", "prefetch") if round_ % 2 else ("prefetch", "plain"):
            start, cpu = time.perf_counter(), children_cpu()
            done = subprocess.run([sys.executable, "-c", PROBE, mode, project, global_root,
                                   QUERIES[round_ % len(QUERIES)]],
                                  capture_output=True, text=True, env=env, check=False)
            if done.returncode:
                raise SystemExit(done.stderr)
            if round_:
                rows[mode].append(((time.perf_counter() - start) * 1e3,
                                   (children_cpu() - cpu) * 1e3))
    load.append(os.getloadavg()[0])
    for mode, runs in rows.items():
        print(f"{mode}: wall {statistics.median(w for w, _ in runs):.0f} ms, "
              f"CPU {statistics.median(c for _, c in runs):.0f} ms")
    print(f"{rounds} alternated pairs; load average (1 min) {load[0]:.2f} before, "
          f"{load[1]:.2f} after")


if __name__ == "__main__":
    main()
