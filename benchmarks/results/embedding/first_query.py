"""The first query after the bundled MiniLM loads, with and without one warm-up embedding.

    python benchmarks/results/embedding/first_query.py [PROCESSES]

Per round (default 6), two fresh processes in turn: each loads the model, embeds
``WARM_UP_QUERY`` or not, then 8 LoCoMo questions (the same 8 for both, drawn by the
round's seed), printing each one's wall and calling-thread CPU ms. Reports the median of
the first question's wall and CPU per mode, and of the other seven.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import json, sys, time
import numpy as np
from octomem.mcp_server.loader import WARM_UP_QUERY
from octomem.plugins.fastembed.embedder import FastembedEmbedder
texts = [json.loads(line)["text"] for line in open(sys.argv[1], encoding="utf-8")]
rng = np.random.default_rng(int(sys.argv[2]))
pick = [texts[i] for i in rng.choice(len(texts), 8, replace=False)]
embedder = FastembedEmbedder()
embedder.load()
if sys.argv[3] == "warm":
    embedder.embed_query(WARM_UP_QUERY)
out = []
for text in pick:
    cpu, wall = time.thread_time_ns(), time.perf_counter_ns()
    embedder.embed_query(text)
    out.append(((time.perf_counter_ns() - wall) / 1e6, (time.thread_time_ns() - cpu) / 1e6))
print(json.dumps(out))
"""
DATA = "/work/shared/data/locomo/queries.jsonl"


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    runs: dict[str, list[list[list[float]]]] = {"cold": [], "warm": []}
    for seed in range(rounds):
        for mode in runs:
            out = subprocess.run([sys.executable, "-c", CHILD, DATA, str(seed), mode],
                                 capture_output=True, text=True, check=True).stdout
            runs[mode].append(json.loads(out.strip().splitlines()[-1]))
    print(f"{rounds} processes per mode; load average {os.getloadavg()[0]:.2f}")
    print("| mode | first query wall ms | first query CPU ms | later queries wall ms | "
          "later queries CPU ms |")
    print("|---|---:|---:|---:|---:|")
    for mode, rows in runs.items():
        first = [r[0] for r in rows]
        later = [x for r in rows for x in r[1:]]
        print(f"| {'warm-up embedded' if mode == 'warm' else 'no warm-up'} | "
              f"{statistics.median(f[0] for f in first):.1f} | "
              f"{statistics.median(f[1] for f in first):.2f} | "
              f"{statistics.median(x[0] for x in later):.1f} | "
              f"{statistics.median(x[1] for x in later):.2f} |")


if __name__ == "__main__":
    main()
