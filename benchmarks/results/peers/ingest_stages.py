"""The CPU split behind ingest-10k.md's round 4: where ``Pipeline.add(embed=False)`` spends
its process CPU time on the harness's 10,000 documents, then the vectors (as ``harness.py
ingest octomem``). Each stage's functions are wrapped to sum ``time.process_time()``:
the batch's token counts (``Pipeline._counted``), chunking (``Pipeline._chunk``, with any
counts it asks for), the document and chunk rows (``bulk.add_documents``), the FTS5 rows
and their change-log rows (``Fts5KeywordArm.index``); "other" is the rest (commits,
batching). Run: ``nice -n 5 python benchmarks/results/peers/ingest_stages.py`` (with an
older checkout first on ``PYTHONPATH`` for a before row).
"""
# ruff: noqa

import functools, os, shutil, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
import octomem.plugins.sqlite.bulk as bulk
import octomem.plugins.fts5.arm as fts5

n = 10000
texts = H.texts_for(n)
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(texts)]
root = H.OUT / f"stages{os.getpid()}"
shutil.rmtree(root, ignore_errors=True)
p = Pipeline(load_settings(None, {}), load_registry(), root)
spent = {}


def timed(owner, name, label):
    f = getattr(owner, name)

    @functools.wraps(f)
    def wrapper(*a, **k):
        t = time.process_time()
        try:
            return f(*a, **k)
        finally:
            spent[label] = spent.get(label, 0) + time.process_time() - t
    setattr(owner, name, wrapper)


timed(Pipeline, "_counted", "token counts (batch)")
timed(Pipeline, "_chunk", "chunking (with any counts it asks)")
timed(bulk, "add_documents", "document and chunk rows")
timed(fts5.Fts5KeywordArm, "index", "FTS5 rows and their log")
spare = H.vectors_for(n + 100)
cpu = time.process_time()
report = p.add(docs, embed=False)
rows_cpu = time.process_time() - cpu
ids, st = report.chunk_ids, p.arms.storage
t = time.process_time()
for s in range(0, len(ids), 256):
    with st.transaction() as tx:
        p.arms.semantic.add(tx, ids[s:s + 256], spare[s:s + len(ids[s:s + 256])])
print(f"rows+fts cpu {rows_cpu:.3f} vectors cpu {time.process_time() - t:.3f} "
      f"load {os.getloadavg()[0]:.1f}")
for label, seconds in spent.items():
    print(f"  {label}: {seconds:.3f}")
print(f"  other (commits, batching): {rows_cpu - sum(spent.values()):.3f}")
p.close()
shutil.rmtree(root, ignore_errors=True)
