"""Round 13: the worker thread's parts of the 10k ingest, thread CPU, least of R rounds, a
fresh pipeline each (its counter loaded first: ``load``; the ceilings' tables: ``tables``):
``ceilings`` (``token_ceilings`` of every batch), ``counted(all)`` (``Pipeline._counted``:
the ceilings again and the exact counts of the texts over budget), ``texts`` (the chunks'
texts), ``rows`` (``bulk_rows_of_texts``), and ``prepare(all)`` (``engine.writes.prepare``
of every batch, caches warm); and how many texts were counted exactly.

Run: ``PEERS_OUT=DIR python worker_parts.py [R]`` (``PYTHONPATH=MAIN`` for main; under
``chrt -f 10``).
"""
# ruff: noqa
import os, shutil, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
import octomem.engine.writes as W
from octomem.plugins.sqlite import bulk
from octomem.engine import token_counts as TC
R = int(sys.argv[1]) if len(sys.argv) > 1 else 5
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(H.texts_for(10000))]
batches = list(W.transactions(docs, None))
T = time.thread_time
best = {}
for r in range(R):
    root = H.OUT / f"pp{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
    p = Pipeline(load_settings(None, {}), load_registry(), root)
    got = {}
    t = T(); p._token_counter(); got["load"] = T() - t
    emb = p.arms.embedder
    t = T(); emb.token_ceilings(["x" * 300]); got["tables"] = T() - t
    t = T(); ce = [emb.token_ceilings([d.text for d in b]) for b in batches]; got["ceilings"] = T() - t
    cnt = emb.count_tokens
    counted = []
    def spy(ts): counted.extend(ts); return cnt(ts)
    p._counter = (spy, p._counter[1])
    t = T(); counts = [p._counted(b) for b in batches]; got["counted(all)"] = T() - t
    t = T(); texts = [[p._chunk_texts(d, c) for d in b] for b, c in zip(batches, counts)]; got["texts"] = T() - t
    t = T(); rows2 = [bulk.bulk_rows_of_texts(b, ts) for b, ts in zip(batches, texts)]; got["rows"] = T() - t
    t = T(); [W.prepare(p, b) for b in batches]; got["prepare(all)"] = T() - t
    for k, v in got.items():
        best[k] = min(best.get(k, 9e9), v)
    p.close(); shutil.rmtree(root, ignore_errors=True)
print(f"least of {R}, thread CPU s, load {os.getloadavg()[0]:.1f}; counted texts {len(counted)}")
for k, v in best.items(): print(f"  {k:14s} {v:.4f}")
