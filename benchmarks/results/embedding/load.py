"""Time loading the bundled MiniLM in fresh processes: two code trees alternated.

Each round starts one process per tree (interpreter start excluded), which imports the
embedder, calls ``load()`` and embeds two LoCoMo-style questions; the trees alternate
round by round so that machine noise hits both alike. Prints medians per tree.

    python benchmarks/results/embedding/load.py ROUNDS NAME=PYTHONPATH [NAME=PYTHONPATH ...]

An empty PYTHONPATH runs the installed tree. An older tree is made importable as
``octomem`` by a folder ``<dir>/octomem`` holding symlinks ``engine``, ``plugins``,
``mcp_server``, ``benchmarks`` into a checkout of that commit (see query.md).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import json, time
t0 = time.perf_counter()
from octomem.plugins.fastembed.embedder import FastembedEmbedder
t1 = time.perf_counter()
embedder = FastembedEmbedder()
embedder.load()
t2 = time.perf_counter()
embedder.embed_query("When did Melanie paint a sunrise?")
t3 = time.perf_counter()
embedder.embed_query("When did Caroline go to the LGBTQ support group?")
t4 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "load": t2 - t1, "first query": t3 - t2,
                  "second query": t4 - t3, "to first vector": t3 - t0}))
"""


def main() -> None:
    rounds = int(sys.argv[1])
    trees = dict(arg.split("=", 1) for arg in sys.argv[2:])
    results: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(rounds):
        for name, path in trees.items():
            env = dict(os.environ, PYTHONPATH=path) if path else dict(os.environ)
            out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                                 text=True, check=True).stdout
            results[name].append(json.loads(out.strip().splitlines()[-1]))
    print(f"load average {os.getloadavg()[0]:.2f} after {rounds} rounds; medians in ms")
    keys = list(next(iter(results.values()))[0])
    print("| tree | " + " | ".join(keys) + " |")
    print("|---|" + "---:|" * len(keys))
    for name, rows in results.items():
        cells = [f"{1000 * statistics.median(r[k] for r in rows):.1f}" for k in keys]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
