"""Cold FTS5 queries (a fresh connection per query, 50 harness queries, top 10 by bm25) on a
10k store made by this checkout's ingest, and its FTS5 segment count."""
import os, shutil, sys, time, statistics
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H, apsw
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
from octomem.plugins.fts5.query import match_expression, query_terms
n = int(sys.argv[1])
root = H.OUT / f"cold{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
p = Pipeline(load_settings(None, {}), load_registry(), root)
p.add([Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(H.texts_for(n))], embed=False)
path = str(p.arms.storage.path); p.close()
qs = [q for q in H.queries()[:50]]
c = apsw.Connection(path)
segs = c.execute("SELECT count(*) FROM fts5_chunks_idx WHERE segid >= 0").fetchall()
struct = c.execute("SELECT count(DISTINCT segid) FROM fts5_chunks_idx").get
c.close()
times, res = [], []
for rnd in range(3):
    for q in qs:
        expr = match_expression(query_terms(q))
        t = time.perf_counter(); c = apsw.Connection(path)
        rows = c.execute("SELECT rowid FROM fts5_chunks WHERE fts5_chunks MATCH ? ORDER BY bm25(fts5_chunks) LIMIT 10", (expr,)).fetchall()
        c.close(); times.append(time.perf_counter() - t); res.append(tuple(rows))
print(f"segments {struct} cold query p50 {statistics.median(times)*1e3:.2f} ms mean {statistics.mean(times)*1e3:.2f} digest {hash(tuple(res)) & 0xffffff:x} load {os.getloadavg()[0]:.1f}")
shutil.rmtree(root, ignore_errors=True)
