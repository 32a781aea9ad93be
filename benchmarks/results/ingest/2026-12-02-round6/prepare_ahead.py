"""Round 6: ``Pipeline.add(embed=False)`` of the harness's 10k documents with the next batch
prepared (counted, chunked) in a worker thread while one is written (``writes.prepared``,
the default) and batch after batch in one thread, alternated in one process, each into a
fresh store; wall and process CPU seconds per add, and after / before per round.

Run: ``PEERS_OUT=DIR nice -n 5 python benchmarks/results/ingest/2026-12-02-round6/prepare_ahead.py [R]``.
"""
# ruff: noqa
from pathlib import Path
import os, shutil, statistics, sys, time
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
from octomem.engine import pipeline as P
from octomem.engine import writes
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document

R = int(sys.argv[1]) if len(sys.argv) > 1 else 5
texts = H.texts_for(10000)
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(texts)]
ahead = P.prepared


def one_after_another(pipeline, batches):
    return (writes.prepare(pipeline, b) for b in batches)


def run(name, prepared, i):
    P.prepared = prepared
    root = H.OUT / f"ahead{os.getpid()}-{name}{i}"; shutil.rmtree(root, ignore_errors=True)
    p = Pipeline(load_settings(None, {}), load_registry(), root)
    p._token_counter()
    t, c = time.perf_counter(), time.process_time()
    p.add(docs, embed=False)
    out = time.perf_counter() - t, time.process_time() - c
    p.close(); shutil.rmtree(root, ignore_errors=True)
    return out


got = {"one thread": [], "prepared ahead": []}
for i in range(R):
    order = [("one thread", one_after_another), ("prepared ahead", ahead)]
    for name, f in order if i % 2 == 0 else order[::-1]:
        got[name].append(run(name.replace(" ", ""), f, i))
    a, b = got["prepared ahead"][-1], got["one thread"][-1]
    print(f"round {i + 1}: one thread {b[0]:.2f} s (CPU {b[1]:.2f}), prepared ahead {a[0]:.2f} s "
          f"(CPU {a[1]:.2f}): wall {a[0] / b[0]:.2f}x, load {os.getloadavg()[0]:.1f}", flush=True)
ratios = [a[0] / b[0] for a, b in zip(got["prepared ahead"], got["one thread"])]
for name, v in got.items():
    print(f"median {name}: wall {statistics.median(x[0] for x in v):.2f} s, "
          f"CPU {statistics.median(x[1] for x in v):.2f} s")
print(f"wall after / before per round: median {statistics.median(ratios):.2f}, "
      f"{min(ratios):.2f}-{max(ratios):.2f}")
