"""Round 13: ``harness.py ingest octomem N`` with module settings changed, alternated in fresh
processes, wall and process CPU per round and per-round ratios to the first variant.

A variant is ``module.NAME=VALUE[;...]`` (an empty string: as is); ``SWITCH=seconds`` sets
the GIL switch interval an ingest uses (``quick_switches``' default); ``GC=off``: Python's
garbage collector off while the batches are prepared and written. Added in round 14
(``../2026-12-04-round14``): ``RAMP=a,b,c``, the first transactions that many documents
(then the default batches); ``SQL=stmt|stmt``, statements run on the new store before the
clock (e.g. ``DROP TRIGGER ...``); items may also be joined by ``&&`` (a statement may hold
``;``).

Run: ``PEERS_OUT=DIR python variants.py ROUNDS N VARIANT ...``, e.g. ``variants.py 7 10000 ""
"octomem.plugins.sqlite.bulk.ROWS_PER_STATEMENT=64" "SWITCH=0.0001"``.
"""
# ruff: noqa
import importlib, os, re, runpy, statistics, subprocess, sys
from pathlib import Path
HARNESS = str(Path(__file__).resolve().parents[2] / "peers" / "harness.py")

if len(sys.argv) > 1 and sys.argv[1] == "--run":  # one ingest, the variant in ROUND13_SET
    items = os.environ.get("ROUND13_SET", "")
    for item in filter(None, items.split("&&") if "&&" in items or "SQL=" in items
                       else items.split(";")):
        target, value = item.split("=", 1)
        if target == "RAMP":
            import octomem.engine.pipeline as pipeline
            import octomem.engine.writes as writes
            def ramped(documents, size, sizes=[int(x) for x in value.split(",")],
                       default=writes.transactions):
                docs, start = list(documents), 0
                for part in sizes:
                    if start < len(docs):
                        yield docs[start:start + part]
                    start += part
                yield from default(docs[start:], size)
            pipeline.transactions = ramped
            continue
        if target == "SQL":
            import octomem.engine.pipeline as pipeline
            init = pipeline.Pipeline.__init__
            def patched(self, *args, init=init, statements=value.split("|"), **kwargs):
                init(self, *args, **kwargs)
                for statement in statements:
                    self.arms.storage.connection().execute(statement)
            pipeline.Pipeline.__init__ = patched
            continue
        if target == "GC":
            import gc
            import octomem.engine.pipeline as pipeline
            prepared = pipeline.prepared
            def gc_off(*args, prepared=prepared):
                gc.disable()
                try:
                    yield from prepared(*args)
                finally:
                    gc.enable()
            pipeline.prepared = gc_off
            continue
        if target == "SWITCH":
            import octomem.engine.switching as switching
            switching.quick_switches.__wrapped__.__defaults__ = (float(value),)
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
        env = dict(os.environ, RUST_LOG="error", ROUND13_SET=v)
        out = subprocess.run([sys.executable, __file__, "--run", n], env=env, capture_output=True,
                             text=True, check=True).stdout
        total = float(re.search(r"total ([0-9.]+)", out).group(1))
        cpu = float(re.search(r"cpu ([0-9.]+)", out).group(1))
        got[v].append((total, cpu))
        print(f"round {r + 1} {v!r}: wall {total:.3f} cpu {cpu:.3f} load {os.getloadavg()[0]:.1f}", flush=True)
first = variants[0]
for v in variants:
    ratios = [a[0] / b[0] for a, b in zip(got[v], got[first])]
    print(f"{v!r:55s} median wall {statistics.median(x[0] for x in got[v]):.3f} "
          f"cpu {statistics.median(x[1] for x in got[v]):.3f}; per round / first: "
          f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})")
