"""Round 9: the Python a 10k ingest's worker thread runs (``engine.writes.prepare`` over the
harness's 10 batches, one after another in this thread), split by part, thread CPU, least
of R rounds (each on a fresh pipeline: the counter loaded again):

- ``checks``: the blank-text check of every document;
- ``counts``: the batch's token counter (ceilings of every text, exact counts of those over
  budget; the first batch also loads the counter);
- ``chunks``: ``Pipeline._chunk`` per document;
- ``rows``: the storage's ``bulk_rows`` (documents' values with sha256 and metadata JSON,
  inherited chunks, chunks' values).

Run: ``PEERS_OUT=DIR python worker_parts.py [R]`` (under ``chrt -f 10`` for a quiet figure).
"""
# ruff: noqa
import os, shutil, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
from octomem.engine.controls import blank
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
import octomem.engine.writes as W

R = int(sys.argv[1]) if len(sys.argv) > 1 else 5
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(H.texts_for(10000))]
batches = list(W.transactions(docs, None))
T = time.thread_time
if __name__ == "__main__":  # importable since round 13 (its set-up: ``docs``, ``batches``)
    best = {}
    for r in range(R):
        root = H.OUT / f"wp{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
        p = Pipeline(load_settings(None, {}), load_registry(), root)
        parts = dict.fromkeys(("checks", "counts (first batch)", "counts (other 9)", "chunks", "rows"), 0.0)
        for k, batch in enumerate(batches):
            t = T(); [blank(d.text) for d in batch]; parts["checks"] += T() - t
            t = T(); count = p._counted(batch)
            parts["counts (first batch)" if k == 0 else "counts (other 9)"] += T() - t
            t = T(); chunks = [p._chunk(d, count) for d in batch]; parts["chunks"] += T() - t
            t = T(); p.arms.storage.bulk_rows(list(zip(batch, chunks))); parts["rows"] += T() - t
        p.close(); shutil.rmtree(root, ignore_errors=True)
        for k, v in parts.items():
            best[k] = min(best.get(k, 9e9), v)
    total = sum(best.values())
    print(f"least of {R}, thread CPU s, load {os.getloadavg()[0]:.1f}")
    for k, v in best.items():
        print(f"  {k:22} {v:.3f}  ({v / total:.0%})")
    print(f"  {'total':22} {total:.3f}")
