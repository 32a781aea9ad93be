# ruff: noqa
"""Round 14: ``harness.py ingest octomem N`` with settings changed, alternated in fresh
processes; wall, rows + FTS5 and CPU per round, per-round ratios to the first variant.

A variant is items joined by ``&&``: ``module.NAME=VALUE``; ``RAMP=a,b,c`` (the first
transactions' sizes in documents, then the default batches); ``SQL=stmt|stmt`` (statements
run on the store right after it is made, before the clock: e.g. ``DROP TRIGGER ...``).

Run: ``PEERS_OUT=DIR python variants.py ROUNDS N VARIANT ...``.
"""
import importlib, os, re, runpy, statistics, subprocess, sys
from pathlib import Path
HARNESS = str(Path(__file__).resolve().parents[2] / "peers" / "harness.py")
if len(sys.argv) > 1 and sys.argv[1] == "--run":
    for item in filter(None, os.environ.get("L19_SET", "").split("&&")):
        target, value = item.split("=", 1)
        if target == "RAMP":
            sizes = [int(x) for x in value.split(",")]
            import octomem.engine.pipeline as pipeline, octomem.engine.writes as writes
            orig = writes.transactions
            def ramped(documents, size, orig=orig, sizes=sizes):
                docs = list(documents); i = 0
                for s in sizes:
                    if i >= len(docs): return
                    yield docs[i:i+s]; i += s
                yield from orig(docs[i:], size)
            pipeline.transactions = ramped
            continue
        if target == "SQL":
            import octomem.engine.pipeline as pipeline
            init = pipeline.Pipeline.__init__
            def patched(self, *a, init=init, value=value, **k):
                init(self, *a, **k)
                conn = self.arms.storage.connection()
                for stmt in value.split("|"):
                    conn.execute(stmt)
            pipeline.Pipeline.__init__ = patched
            continue
        module, name = target.rsplit(".", 1)
        module = importlib.import_module(module)
        setattr(module, name, type(getattr(module, name))(value))
    sys.argv = [HARNESS, "ingest", "octomem", sys.argv[2]]
    runpy.run_path(HARNESS, run_name="__main__")
    sys.exit()
R, n, variants = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
got = {v: [] for v in variants}
for r in range(R):
    for v in variants:
        env = dict(os.environ, RUST_LOG="error", L19_SET=v)
        out = subprocess.run([sys.executable, __file__, "--run", n], env=env, capture_output=True, text=True, check=True).stdout
        total = float(re.search(r"total ([0-9.]+)", out).group(1)); cpu = float(re.search(r"cpu ([0-9.]+)", out).group(1))
        rows = float(re.search(r"rows\+fts ([0-9.]+)", out).group(1))
        got[v].append((total, cpu, rows))
        print(f"round {r + 1} {v!r}: wall {total:.3f} rows {rows:.3f} cpu {cpu:.3f} load {os.getloadavg()[0]:.1f}", flush=True)
first = variants[0]
for v in variants:
    ratios = [a[0] / b[0] for a, b in zip(got[v], got[first])]
    print(f"{v!r:45s} median wall {statistics.median(x[0] for x in got[v]):.3f} rows {statistics.median(x[2] for x in got[v]):.3f} "
          f"cpu {statistics.median(x[1] for x in got[v]):.3f}; per round / first: {statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})")
