"""Alternate LanceDB and several octomem package folders through ``harness.py ingest``
(round 8, Dec 3): each a fresh process, in turn, ROUNDS times; load average beside each
time; medians, and per round each octomem's wall and CPU ratio to the first folder's and
to LanceDB's of the same round.

``python benchmarks/results/ingest/rounds.py ROUNDS NAME=DIR [NAME=DIR ...]``: each DIR
holds ``octomem/{engine,plugins,mcp_server,benchmarks}`` (``git archive COMMIT engine
plugins mcp_server benchmarks``), put first on ``PYTHONPATH``; ``NAME=.`` is the installed
checkout. N is 10,000 (``INGEST_N`` to change it).
"""
# ruff: noqa
import os, re, statistics, subprocess, sys
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[1] / "peers" / "harness.py"
rounds = int(sys.argv[1])
folders = [a.split("=", 1) for a in sys.argv[2:]]
n = os.environ.get("INGEST_N", "10000")
got = {name: [] for name in ["lance", *(f[0] for f in folders)]}
cpu = {name: [] for name in got}
for r in range(rounds):
    for name, path in [("lance", None), *folders]:
        env = dict(os.environ, RUST_LOG="error", LANCE_LOG="error")
        if path and path != ".":
            env["PYTHONPATH"] = path
        which = "lance" if name == "lance" else "octomem"
        out = subprocess.run([sys.executable, str(HARNESS), "ingest", which, n], env=env,
                             capture_output=True, text=True, check=True).stdout
        total = float(re.search(r"total ([0-9.]+)", out).group(1))
        c = float(re.search(r"cpu ([0-9.]+)", out).group(1))
        parts = re.search(r"rows\+fts ([0-9.]+) vectors ([0-9.]+)", out)
        src = re.search(r"src (\S+)", out)
        got[name].append(total); cpu[name].append(c)
        extra = f" (rows+fts {parts.group(1)}, vectors {parts.group(2)}) src {src.group(1)}" if parts else ""
        print(f"round {r + 1} {name}: {total:.2f} s cpu {c:.2f} s{extra} load {os.getloadavg()[0]:.1f}",
              flush=True)
first = folders[0][0]
for name in got:
    wall_l = [a / b for a, b in zip(got[name], got["lance"])]
    cpu_l = [a / b for a, b in zip(cpu[name], cpu["lance"])]
    wall_f = [a / b for a, b in zip(got[name], got[first])]
    cpu_f = [a / b for a, b in zip(cpu[name], cpu[first])]
    print(f"median {name}: wall {statistics.median(got[name]):.3f} s cpu {statistics.median(cpu[name]):.3f} s"
          f" | / lance per round: wall median {statistics.median(wall_l):.2f}, cpu median {statistics.median(cpu_l):.2f}"
          f" | / {first} per round: wall median {statistics.median(wall_f):.2f} {[round(x, 2) for x in wall_f]},"
          f" cpu median {statistics.median(cpu_f):.2f} {[round(x, 2) for x in cpu_f]}")
