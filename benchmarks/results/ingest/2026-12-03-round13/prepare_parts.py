"""Round 13: the worker thread's parts of the 10k ingest, thread CPU, least of R rounds, a
fresh pipeline each (its counter loaded first: ``load``; the ceilings' tables: ``tables``):
``ceilings`` (``token_ceilings`` of every batch), ``counted(all)`` (``Pipeline._counted``:
the ceilings again and the exact counts of the texts over budget), ``texts`` (the chunks'
texts), ``rows`` (``bulk_rows_of_texts``), and ``prepare(all)`` (``engine.writes.prepare``
of every batch, caches warm); and how many texts were counted exactly. The documents and
batches are round 9's ``worker_parts.py``'s.

Run: ``PEERS_OUT=DIR python prepare_parts.py [R]`` (``PYTHONPATH=MAIN`` for main; under
``chrt -f 10``).
"""
# ruff: noqa
import importlib.util, os, shutil, time
from pathlib import Path
spec = importlib.util.spec_from_file_location(
    "round9_worker_parts", Path(__file__).resolve().parents[1] / "2026-12-03-round9" / "worker_parts.py")
round9 = importlib.util.module_from_spec(spec); spec.loader.exec_module(round9)
from octomem.plugins.sqlite import bulk
H, W, R, batches, T = round9.H, round9.W, round9.R, round9.batches, round9.T
best = {}
for r in range(R):
    root = H.OUT / f"pp{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
    p = round9.Pipeline(round9.load_settings(None, {}), round9.load_registry(), root)
    got, emb, counted = {}, p.arms.embedder, []
    t = T(); p._token_counter(); got["load"] = T() - t
    t = T(); emb.token_ceilings(["x" * 300]); got["tables"] = T() - t
    t = T(); [emb.token_ceilings([d.text for d in b]) for b in batches]; got["ceilings"] = T() - t
    count = emb.count_tokens
    p._counter = (lambda texts: counted.extend(texts) or count(texts), p._counter[1])
    t = T(); counts = [p._counted(b) for b in batches]; got["counted(all)"] = T() - t
    t = T(); texts = [[p._chunk_texts(d, c) for d in b] for b, c in zip(batches, counts)]; got["texts"] = T() - t
    t = T(); [bulk.bulk_rows_of_texts(b, ts) for b, ts in zip(batches, texts)]; got["rows"] = T() - t
    t = T(); [W.prepare(p, b) for b in batches]; got["prepare(all)"] = T() - t
    for k, v in got.items():
        best[k] = min(best.get(k, 9e9), v)
    p.close(); shutil.rmtree(root, ignore_errors=True)
print(f"least of {R}, thread CPU s, load {os.getloadavg()[0]:.1f}; counted texts {len(counted)}")
for k, v in best.items():
    print(f"  {k:14s} {v:.4f}")
