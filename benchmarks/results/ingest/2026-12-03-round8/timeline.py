"""Round 8: when each batch of the 10k ingest is prepared (worker thread) and written (the
caller's), wall and thread CPU per step, ``Pipeline.add(embed=False)`` as it runs.

``PEERS_OUT=DIR python benchmarks/results/ingest/2026-12-03-round8/timeline.py``
(``ROWS_IN_WORKER=1`` with ``rows-in-worker.patch`` applied: the rows' values in the worker).
"""
# ruff: noqa
import os, sys, time, shutil, threading
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
import octomem.engine.writes as W, octomem.engine.pipeline as P
ev = []
orig_prepare = W.prepare
def prep(pipeline, batch):
    t, c = time.perf_counter(), time.thread_time()
    r = orig_prepare(pipeline, batch)
    ev.append(("prep", threading.current_thread().name[:8], t, time.perf_counter(), time.thread_time() - c)); return r
W.prepare = prep
orig_wb = P.write_batch
def wb(*a, **k):
    t, c = time.perf_counter(), time.thread_time()
    r = orig_wb(*a, **k)
    ev.append(("write", "main", t, time.perf_counter(), time.thread_time() - c)); return r
P.write_batch = wb
n = 10000
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(H.texts_for(n))]
root = H.OUT / f"tl{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
p = Pipeline(load_settings(None, {}), load_registry(), root)
t0, c0 = time.perf_counter(), time.process_time()
p.add(docs, embed=False)
w, c = time.perf_counter() - t0, time.process_time() - c0
print(f"wall {w:.3f} cpu {c:.3f} load {os.getloadavg()[0]:.1f}")
for kind, th, a, b, cpu in ev:
    print(f"{kind:5} {th:8} {a - t0:6.3f} -> {b - t0:6.3f} wall {b - a:.3f} cpu {cpu:.3f}")
p.close(); shutil.rmtree(root, ignore_errors=True)
