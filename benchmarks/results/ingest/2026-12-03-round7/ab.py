"""Round 7: ``harness.py ingest octomem 10000`` (or ``lance``) alternated over package
folders in fresh processes (``PYTHONPATH=DIR``; ``self`` is this checkout), the order
rotated every round; medians of total wall, process CPU, rows + FTS5 and vectors.

Run: ``PEERS_OUT=DIR python benchmarks/results/ingest/2026-12-03-round7/ab.py ROUNDS DIR|self|lance ...``.
"""
# ruff: noqa
import os, re, statistics, subprocess, sys
H = str(__import__("pathlib").Path(__file__).resolve().parents[2] / "peers" / "harness.py")
rounds = int(sys.argv[1]); dirs = sys.argv[2:]
got = {d: [] for d in dirs}
for r in range(rounds):
    order = dirs[r % len(dirs):] + dirs[:r % len(dirs)]
    for d in order:
        env = dict(os.environ, RUST_LOG="error")
        if d != "lance" and d != "self":
            env["PYTHONPATH"] = d
        which = "lance" if d == "lance" else "octomem"
        out = subprocess.run([sys.executable, H, "ingest", which, "10000"], env=env, capture_output=True, text=True, check=True).stdout
        tot = float(re.search(r"total ([0-9.]+)", out).group(1)); cpu = float(re.search(r"cpu ([0-9.]+)", out).group(1))
        m = re.search(r"rows\+fts ([0-9.]+) vectors ([0-9.]+)", out)
        got[d].append((tot, cpu, float(m.group(1)) if m else 0, float(m.group(2)) if m else 0, os.getloadavg()[0]))
        print(f"round {r+1} {os.path.basename(d.rstrip('/')):14} total {tot:.2f} cpu {cpu:.2f} rows {got[d][-1][2]:.2f} vec {got[d][-1][3]:.2f} load {os.getloadavg()[0]:.1f}", flush=True)
for d in dirs:
    g = got[d]
    print(f"{os.path.basename(d.rstrip('/')):14} median total {statistics.median(x[0] for x in g):.3f} cpu {statistics.median(x[1] for x in g):.3f} "
          f"rows {statistics.median(x[2] for x in g):.3f} vec {statistics.median(x[3] for x in g):.3f} load {min(x[4] for x in g):.1f}-{max(x[4] for x in g):.1f}")
