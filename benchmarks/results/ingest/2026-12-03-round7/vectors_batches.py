"""Round 7: the vectors of the harness's 10k documents alone, written as an ingest writes
them: after ``Pipeline.add(embed=False)``, ``SqliteVecSemanticArm.add`` in transactions of
``VB`` vectors (64: ``retrieval.embed_batch_size``'s default, what ``Pipeline.embed_pending``
writes; 256: what ``harness.py ingest`` writes), wall and thread CPU of that loop.

Run (alternating checkouts): ``VB=64 PYTHONPATH=PKG PEERS_OUT=DIR python
benchmarks/results/ingest/2026-12-03-round7/vectors_batches.py``.
"""
# ruff: noqa
import cProfile, pstats, os, shutil, sys, time
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2] / "peers"))
import harness as H
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
n = 10000
texts = H.texts_for(n)
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(texts)]
root = H.OUT / f"vprof{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
p = Pipeline(load_settings(None, {}), load_registry(), root)
spare = H.vectors_for(2 * n)
rep = p.add(docs, embed=False)
sem, st = p.arms.semantic, p.arms.storage
ids = rep.chunk_ids; vecs = spare[:len(ids)]
prof = "--prof" in sys.argv
if prof:
    pr = cProfile.Profile(time.thread_time); pr.enable()
t, c = time.perf_counter(), time.thread_time()
B = int(os.environ.get("VB", "256"))
for s in range(0, len(ids), B):
    with st.transaction() as tx:
        sem.add(tx, ids[s:s + B], vecs[s:s + B])
print(f"VB={B} vectors wall {time.perf_counter()-t:.3f} cpu {time.thread_time()-c:.3f} load {os.getloadavg()[0]:.2f}")
if prof:
    pr.disable(); pstats.Stats(pr).sort_stats("tottime").print_stats(25)
p.close(); shutil.rmtree(root, ignore_errors=True)
