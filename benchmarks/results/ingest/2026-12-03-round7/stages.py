"""Round 7: where a 10k ingest's time goes, stage by stage: ``Pipeline.add(embed=False)`` of
the harness's 10,000 documents with the next batch prepared in the caller's thread (no
worker: ``--threaded`` keeps it), each stage's wall and thread CPU (counting and chunking,
the rows, the chunks insert, FTS5 and its log, the change log), then the vectors as
``harness.py ingest`` writes them; and the sum of SQLite's own time per statement
(``apsw`` ``set_profile``; a statement run inside another, as vec0's, is also in its
caller's sum). The hooks add their own cost: read the shares, not the totals.

Run: ``PEERS_OUT=DIR python benchmarks/results/ingest/2026-12-03-round7/stages.py [--threaded]``.
"""
# ruff: noqa
import collections, functools, os, shutil, sys, time
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2] / "peers"))
import harness as H
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
import octomem.engine.writes as W
import octomem.plugins.sqlite.bulk as bulk
import octomem.plugins.fts5.arm as fts5
import octomem.plugins.sqlite.changelog as changelog

threaded = "--threaded" in sys.argv
n = 10000
texts = H.texts_for(n)
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(texts)]
root = H.OUT / f"prof{os.getpid()}"
shutil.rmtree(root, ignore_errors=True)
p = Pipeline(load_settings(None, {}), load_registry(), root)
spare = H.vectors_for(2 * n)
wall = collections.Counter(); cpu = collections.Counter()

def timed(owner, name, label):
    f = getattr(owner, name)
    @functools.wraps(f)
    def wrapper(*a, **k):
        t, c = time.perf_counter(), time.thread_time()
        try:
            return f(*a, **k)
        finally:
            wall[label] += time.perf_counter() - t; cpu[label] += time.thread_time() - c
    setattr(owner, name, wrapper)

if not threaded:
    def seq(pipeline, batches):
        for b in batches:
            yield W.prepare(pipeline, b)
    W.prepared = seq
    import octomem.engine.pipeline as P; P.prepared = seq
timed(W, "prepare", "prepare (count+chunk)")
timed(bulk, "insert_chunks", "  chunks insert")
timed(bulk, "add_documents", "rows (py+sql)")
timed(fts5.Fts5KeywordArm, "index", "fts5 index+log")
timed(changelog, "record", "  changelog.record")
sqlt = collections.Counter(); sqln = collections.Counter()
conn = p.arms.storage.connection()
def prof(stmt, ns):
    key = " ".join(stmt.split())[:90]
    sqlt[key] += ns / 1e9; sqln[key] += 1
conn.set_profile(prof)
t0, c0 = time.perf_counter(), time.process_time()
rep = p.add(docs, embed=False)
rows_wall, rows_cpu = time.perf_counter() - t0, time.process_time() - c0
sem, st = p.arms.semantic, p.arms.storage
ids = rep.chunk_ids; vecs = spare[:len(ids)]
t1, c1 = time.perf_counter(), time.process_time()
for s in range(0, len(ids), 256):
    with st.transaction() as tx:
        sem.add(tx, ids[s:s + 256], vecs[s:s + 256])
vw, vc = time.perf_counter() - t1, time.process_time() - c1
conn.set_profile(None)
print(f"threaded={threaded} rows+fts wall {rows_wall:.3f} cpu {rows_cpu:.3f} | vectors wall {vw:.3f} cpu {vc:.3f} | load {os.getloadavg()[0]:.2f}")
for k in wall:
    print(f"  {k:32} wall {wall[k]:.3f} thread-cpu {cpu[k]:.3f}")
print("SQL statements (sum of sqlite's own times):")
for k, v in sqlt.most_common(25):
    print(f"  {v:.4f} s  x{sqln[k]:5}  {k}")
print(f"  total SQL {sum(sqlt.values()):.3f}")
p.close(); shutil.rmtree(root, ignore_errors=True)
