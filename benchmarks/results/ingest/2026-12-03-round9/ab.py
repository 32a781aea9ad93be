"""Round 9: variants of ``harness.py ingest octomem|lance N`` alternated in fresh processes
(each variant a package folder first on ``PYTHONPATH``, e.g. main as an archive, or the
installed checkout), wall and process CPU per round, and per-round ratios to the first.

Run: ``PEERS_OUT=DIR python ab.py ROUNDS N name=lance|octomem[:PYTHONPATH][:ENV=VAL,...] ...``
"""
# ruff: noqa
import os, re, statistics, subprocess, sys
from pathlib import Path
H = str(Path(__file__).resolve().parents[2] / "peers" / "harness.py")
R, n = int(sys.argv[1]), sys.argv[2]
variants = []
for spec in sys.argv[3:]:
    name, rest = spec.split("=", 1)
    parts = rest.split(":")
    which, path, env = parts[0], None, {}
    for x in parts[1:]:
        if "=" in x:
            for kv in x.split(","):
                k, v = kv.split("="); env[k] = v
        elif x:
            path = x
    variants.append((name, which, path, env))
got = {v[0]: [] for v in variants}
for r in range(R):
    for name, which, path, extra in variants:
        env = dict(os.environ, RUST_LOG="error", LANCE_LOG="error", **extra)
        if path: env["PYTHONPATH"] = path
        out = subprocess.run([sys.executable, H, "ingest", which, n], env=env, capture_output=True, text=True, check=True).stdout
        tot = float(re.search(r"total ([0-9.]+)", out).group(1)); cpu = float(re.search(r"cpu ([0-9.]+)", out).group(1))
        rows = re.search(r"rows\+fts ([0-9.]+) vectors ([0-9.]+)", out)
        load = os.getloadavg()[0]
        got[name].append((tot, cpu, load))
        print(f"round {r+1} {name}: wall {tot:.3f} cpu {cpu:.3f}" + (f" (rows+fts {rows.group(1)}, vectors {rows.group(2)})" if rows else "") + f" load {load:.1f}", flush=True)
base = variants[0][0]
for name in got:
    w = [x[0] for x in got[name]]; c = [x[1] for x in got[name]]
    rw = [a[0] / b[0] for a, b in zip(got[name], got[base])]; rc = [a[1] / b[1] for a, b in zip(got[name], got[base])]
    print(f"{name:12} median wall {statistics.median(w):.3f} cpu {statistics.median(c):.3f} | per-round / {base}: wall {statistics.median(rw):.2f} ({min(rw):.2f}-{max(rw):.2f}) cpu {statistics.median(rc):.2f} ({min(rc):.2f}-{max(rc):.2f})")
print("load range", min(x[2] for v in got.values() for x in v), max(x[2] for v in got.values() for x in v))
