"""Round 13: the token ceilings of the 10k ingest's ten batches (``token_ceilings``, whole
batches by numpy) in a thread of their own, alone and then beside the batches' writes
(every batch prepared before, then written as ``Pipeline.add`` writes them, 0.2 ms switch
interval): the ceilings' thread CPU and wall, and the writes' wall and CPU. Three rounds,
a fresh store each.

Run: ``PEERS_OUT=DIR python beside_writes.py`` (under ``chrt -f 10``).
"""
# ruff: noqa
import os, sys, time, shutil, threading
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline, AddReport
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
import octomem.engine.writes as W
from octomem.engine.switching import quick_switches
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(H.texts_for(10000))]
batches = list(W.transactions(docs, None))
texts = [[d.text for d in b] for b in batches]
def ceil_all(emb, out):
    t, w = time.thread_time(), time.perf_counter()
    for ts in texts: emb.token_ceilings(ts)
    out.append((time.thread_time() - t, time.perf_counter() - w))
for r in range(3):
    root = H.OUT / f"bs{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
    p = Pipeline(load_settings(None, {}), load_registry(), root)
    emb = p.arms.embedder
    ready = [W.prepare(p, b) for b in batches]
    alone = []; ceil_all(emb, alone)
    st = p.arms.storage
    res = []
    with quick_switches():
        th = threading.Thread(target=ceil_all, args=(emb, res))
        t0 = time.perf_counter(); c0 = time.thread_time()
        th.start()
        rep = AddReport()
        for x in ready:
            with st.transaction() as tx:
                W.write_batch(p, tx, x.batch, rep, x.count, x.chunks, x.rows, x.texts)
        wt = time.perf_counter() - t0; wc = time.thread_time() - c0
        th.join()
    print(f"ceil alone cpu {alone[0][0]:.4f} wall {alone[0][1]:.4f} | beside writes: cpu {res[0][0]:.4f} wall {res[0][1]:.4f} | writes wall {wt:.4f} cpu {wc:.4f}")
    p.close()
