"""Round 7: the garbage collector during a 10k ingest (``Pipeline.add(embed=False)`` then the
vectors as the harness writes them): process CPU between each collection's start and
stop (``gc.callbacks``; the worker thread's CPU meanwhile included) and collections per
generation.

Run: ``PEERS_OUT=DIR python benchmarks/results/ingest/2026-12-03-round7/gc_costs.py``.
"""
# ruff: noqa
import gc, os, shutil, sys, time
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2] / "peers"))
import harness as H
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
n = 10000
texts = H.texts_for(n)
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(texts)]
root = H.OUT / f"gcm{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
p = Pipeline(load_settings(None, {}), load_registry(), root)
spare = H.vectors_for(2 * n)
st = {"t": 0.0, "n": [0, 0, 0], "start": 0}
def cb(phase, info):
    if phase == "start": st["start"] = time.process_time()
    else: st["t"] += time.process_time() - st["start"]; st["n"][info["generation"]] += 1
gc.callbacks.append(cb)
t, c = time.perf_counter(), time.process_time()
rep = p.add(docs, embed=False)
sem, s_ = p.arms.semantic, p.arms.storage
ids = rep.chunk_ids; vecs = spare[:len(ids)]
for s in range(0, len(ids), 256):
    with s_.transaction() as tx:
        sem.add(tx, ids[s:s + 256], vecs[s:s + 256])
print(f"total wall {time.perf_counter()-t:.3f} cpu {time.process_time()-c:.3f} gc cpu {st['t']:.4f} collections {st['n']} objects tracked {len(gc.get_objects())} load {os.getloadavg()[0]:.1f}")
p.close(); shutil.rmtree(root, ignore_errors=True)
