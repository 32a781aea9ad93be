"""Round 12: the worker thread's chunks and rows of the 10k ingest, thread CPU, least of R
rounds (the counts made first, outside the clock):

- ``chunk``: ``Pipeline._chunk`` per document (one ``Chunk`` per stored chunk), then
  ``rows``: the storage's ``bulk_rows`` of those pairs (a second ``Chunk`` each: the
  document's fields inherited), as ``engine.writes.prepare`` did until this round;
- ``texts``: ``Pipeline._chunk_texts`` per document, then ``rows_of_texts``: the storage's
  ``bulk_rows_of_texts`` (``bulk_text_rows``: one ``Chunk`` per stored chunk), as it does now.

Both give the same rows and chunks (checked every round).

Run: ``PEERS_OUT=DIR python worker_rows.py [R]`` (under ``chrt -f 10`` for a quiet figure).
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

R = int(sys.argv[1]) if len(sys.argv) > 1 else 7
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(H.texts_for(10000))]
batches = list(W.transactions(docs, None))
root = H.OUT / f"wr{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
p = Pipeline(load_settings(None, {}), load_registry(), root)
counts = [p._counted(b) for b in batches]
T = time.thread_time
best = {}
for r in range(R):
    got = {}
    t = T(); chunks = [[p._chunk(d, c) for d in b] for b, c in zip(batches, counts)]; got["chunk"] = T() - t
    t = T(); rows = [bulk.bulk_rows(list(zip(b, ch))) for b, ch in zip(batches, chunks)]; got["rows"] = T() - t
    t = T(); texts = [[p._chunk_texts(d, c) for d in b] for b, c in zip(batches, counts)]; got["texts"] = T() - t
    t = T(); rows2 = [bulk.bulk_rows_of_texts(b, ts) for b, ts in zip(batches, texts)]; got["rows_of_texts"] = T() - t
    assert [(x.documents, x.rows, x.chunks, x.sizes) for x in rows] == \
        [(x.documents, x.rows, x.chunks, x.sizes) for x in rows2]
    for k, v in got.items():
        best[k] = min(best.get(k, 9e9), v)
p.close(); shutil.rmtree(root, ignore_errors=True)
print(f"least of {R}, thread CPU s, load {os.getloadavg()[0]:.1f}")
print(f"  before: chunk {best['chunk']:.4f} + rows {best['rows']:.4f} = {best['chunk'] + best['rows']:.4f}")
print(f"  now:    texts {best['texts']:.4f} + rows_of_texts {best['rows_of_texts']:.4f} = "
      f"{best['texts'] + best['rows_of_texts']:.4f}")
