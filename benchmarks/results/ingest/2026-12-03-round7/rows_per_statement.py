"""Round 7: the 10k ``documents`` and ``chunks`` rows of the harness by ``executemany`` and
by ``INSERT ... VALUES`` lists of 64, 256 and 1,024 rows a statement (rolled back), thread
CPU and wall.

Run: ``PEERS_OUT=DIR python benchmarks/results/ingest/2026-12-03-round7/rows_per_statement.py``.
"""
# ruff: noqa
import os, sys, time, statistics, json, shutil, itertools
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2] / "peers"))
import harness as H
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
from octomem.engine.sql.rows import CHUNK_FIELDS, DOC_COLUMNS
from octomem.plugins.sqlite.rows import stored_params
n = 10000
texts = H.texts_for(n)
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(texts)]
root = H.OUT / f"valm{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
p = Pipeline(load_settings(None, {}), load_registry(), root)
conn = p.arms.storage.connection()
drows = [stored_params(d, [type("C", (), {"text": d.text, "ordinal": 0, "revision": 1})()]) for d in docs]
crows = [(d.id, 0, d.text, d.kind, "[]", float(d.created_at), None, None, json.dumps(d.metadata), float(d.created_at), None, 1) for d in docs]
DOCINS = f"INSERT INTO documents ({DOC_COLUMNS}, content_hash) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
CHINS = f"INSERT INTO chunks ({CHUNK_FIELDS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
def many(sql, rows, group):
    one = sql.split("VALUES ")[1]
    for s in range(0, len(rows), group):
        part = rows[s:s + group]
        conn.execute(sql + (", " + one) * (len(part) - 1), tuple(itertools.chain.from_iterable(part)))
res = {}
def timed(label, f, R=5):
    for _ in range(R):
        conn.execute("BEGIN IMMEDIATE")
        t, c = time.perf_counter(), time.thread_time(); f(); res.setdefault(label, []).append((time.thread_time() - c, time.perf_counter() - t))
        conn.execute("ROLLBACK")
for _ in range(1):
    timed("executemany docs+chunks", lambda: (conn.executemany(DOCINS, drows), conn.executemany(CHINS, crows)))
    for g in (64, 256, 1024):
        timed(f"values x{g} docs+chunks", lambda: (many(DOCINS, drows, g), many(CHINS, crows, g)))
print(f"load {os.getloadavg()[0]:.2f}")
for k, v in res.items():
    print(f"  {k:30} cpu min {min(x[0] for x in v):.4f} med {statistics.median(x[0] for x in v):.4f}  wall med {statistics.median(x[1] for x in v):.4f}")
p.close(); shutil.rmtree(root, ignore_errors=True)
