"""Round 8: the Python pieces of the 10k ingest, each alone, thread CPU, least of R runs.

Over ``harness.py``'s 10,000 documents in the ingest's batches of 1,024: the token ceilings
(``WordPieceCounter.ceilings``, refined above the budget, texts and titles as
``BatchCounts`` asks), ``BatchCounts`` with cold word caches (ceilings plus the exact counts
of the texts over budget), ``Pipeline._chunk`` of every document, and the row values of
``plugins/sqlite/bulk.py`` (``stored_params``, ``inherit``, the metadata JSON). Run it
with an older checkout on ``PYTHONPATH`` for the before column (that folder's code, this
file's harness):
``PEERS_OUT=DIR PYTHONPATH=BEFORE python benchmarks/results/ingest/2026-12-03-round8/pieces.py``.
"""
# ruff: noqa
import os, shutil, statistics, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
import octomem.engine.writes as W
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.sql.rows import dumps, inherit
from octomem.engine.types import Document
from octomem.plugins.sqlite.rows import stored_params

R = int(sys.argv[1]) if len(sys.argv) > 1 else 9
texts = H.texts_for(10000)
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(texts)]
root = H.OUT / f"pieces{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
p = Pipeline(load_settings(None, {}), load_registry(), root)
p._token_counter()
counter = p.arms.embedder._get_counter()
batches = list(W.transactions(docs, None))


def least(f):
    ts = []
    for _ in range(R):
        t = time.thread_time(); f(); ts.append(time.thread_time() - t)
    return min(ts) * 1e3, statistics.median(ts) * 1e3


def cold_counts():
    counter._words.clear(); counter._segments.clear()
    return [p._counted(b) for b in batches]


counts = [p._counted(b) for b in batches]
chunks = [[p._chunk(d, c) for d in b] for b, c in zip(batches, counts)]
pairs = [(d, cs) for b, cb in zip(batches, chunks) for d, cs in zip(b, cb)]
parts = {
    "token ceilings (10 batches)": lambda: [p._ceilings([t for d in b for t in (d.text, d.title or "")])
                                            for b in batches],
    "BatchCounts, cold word caches": cold_counts,
    "Pipeline._chunk, 10k documents": lambda: [[p._chunk(d, c) for d in b] for b, c in zip(batches, counts)],
    "stored_params, 10k documents": lambda: [stored_params(d, cs) for d, cs in pairs],
    "inherit, 10k chunks": lambda: [inherit(c, d) for d, cs in pairs for c in cs],
    "metadata JSON (dumps), 10k": lambda: [dumps(dict(d.metadata), "m") for d in docs],
}
print(f"{Path(W.__file__).parents[1]} (R={R}, load {os.getloadavg()[0]:.1f})")
for name, f in parts.items():
    lo, med = least(f)
    print(f"  {name:34} least {lo:7.1f} ms  median {med:7.1f} ms")
p.close(); shutil.rmtree(root, ignore_errors=True)
