"""Round 7: what the ``chunks`` change-log trigger costs when 10k chunk rows are inserted
(after their documents, in 10 ``executemany`` of 1,024, rolled back): as it is (log row
and prune per row), without the prune, into a log table without ``AUTOINCREMENT``, and
without a trigger. Thread CPU, min and median of 5.

Run: ``PEERS_OUT=DIR python benchmarks/results/ingest/2026-12-03-round7/trigger_costs.py``.
"""
# ruff: noqa
import os, sys, time, statistics, json, shutil
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
root = H.OUT / f"trig{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
p = Pipeline(load_settings(None, {}), load_registry(), root)
conn = p.arms.storage.connection()
drows = [stored_params(d, [type("C", (), {"text": d.text, "ordinal": 0, "revision": 1})()]) for d in docs]
crows = [(d.id, 0, d.text, d.kind, "[]", float(d.created_at), None, None, json.dumps(d.metadata), float(d.created_at), None, 1) for d in docs]
DOCINS = f"INSERT INTO documents ({DOC_COLUMNS}, content_hash) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
CHINS = f"INSERT INTO chunks ({CHUNK_FIELDS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
res = {}
def timed(label, setup):
    conn.execute("BEGIN IMMEDIATE"); setup(); conn.executemany(DOCINS, drows)
    c = time.thread_time()
    for s in range(0, n, 1024): conn.executemany(CHINS, crows[s:s+1024])
    res.setdefault(label, []).append(time.thread_time() - c)
    conn.execute("ROLLBACK")
T = "vector_log"
def noprune():
    conn.execute("DROP TRIGGER chunks_log_insert")
    conn.execute(f"CREATE TRIGGER chunks_log_insert AFTER INSERT ON chunks BEGIN INSERT INTO {T} (table_name, chunk_id) VALUES ('chunks', NEW.id); END")
def none(): conn.execute("DROP TRIGGER chunks_log_insert")
def plainlog():
    conn.execute("DROP TRIGGER chunks_log_insert")
    conn.execute("CREATE TABLE IF NOT EXISTS log2 (seq INTEGER PRIMARY KEY, table_name TEXT NOT NULL, chunk_id INTEGER)")
    conn.execute(f"CREATE TRIGGER chunks_log_insert AFTER INSERT ON chunks BEGIN INSERT INTO log2 (table_name, chunk_id) VALUES ('chunks', NEW.id); END")
for _ in range(5):
    timed("current trigger", lambda: None)
    timed("insert only (no prune)", noprune)
    timed("no AUTOINCREMENT log, no prune", plainlog)
    timed("no trigger", none)
print(f"load {os.getloadavg()[0]:.2f}")
for k, v in res.items():
    print(f"  {k:34} min {min(v):.4f} median {statistics.median(v):.4f}")
p.close(); shutil.rmtree(root, ignore_errors=True)
