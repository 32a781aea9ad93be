"""Round 6: the SQL of a 10k ingest alone, each part alternated with the others in one
process, process CPU seconds (min and median of R runs), every part rolled back.

The rows are the harness's 10,000 documents (``benchmarks/results/peers/harness.py``) as
ingest writes them, into a store of the current schema that holds one document: the
``documents`` rows (with and without its two secondary indexes), the ``chunks`` rows
(after the documents; without the change-log trigger, without the five indexes, without
both), FTS5 by one row per chunk and by one ``INSERT ... SELECT`` over the id range (this
round's change), 10k change-log rows, vec0 inserts (256 per ``executemany``, as the harness
writes vectors) against a plain ``(chunk_id INTEGER PRIMARY KEY, embedding BLOB)`` table,
and everything together (no commit).

Run: ``PEERS_OUT=DIR nice -n 5 python benchmarks/results/ingest/2026-12-02-round6/sql_costs.py [R]``.
"""
# ruff: noqa
from pathlib import Path
import os, shutil, statistics, sys, time, json
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
import numpy as np
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
from octomem.engine.sql.rows import CHUNK_FIELDS, DOC_COLUMNS
from octomem.plugins.sqlite.rows import stored_params
R = int(sys.argv[1]) if len(sys.argv) > 1 else 3
n = 10000
texts = H.texts_for(n)
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(texts)]
root = H.OUT / f"sqlmicro{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
p = Pipeline(load_settings(None, {}), load_registry(), root)
# a store with one document so that vec set exists
p.add(docs[:1], embed=False)
with p.arms.storage.transaction() as tx:
    p.arms.semantic.bind(tx, "random", 384)
table = p.arms.semantic.bound.table
conn = p.arms.storage.connection()
drows = [stored_params(d, [type("C", (), {"text": d.text, "ordinal": 0, "revision": 1})()]) for d in docs[1:]]
first = 2
crows = [(d.id, 0, d.text, d.kind, "[]", float(d.created_at), None, None, json.dumps(d.metadata), float(d.created_at), None, 1) for d in docs[1:]]
ids = list(range(first, first + len(crows)))
vecs = H.vectors_for(len(ids))
res = {}
def timed(label, setup, f):
    conn.execute("BEGIN IMMEDIATE")
    setup()
    t = time.process_time(); f(); res.setdefault(label, []).append(time.process_time() - t)
    conn.execute("ROLLBACK")
DOCINS = f"INSERT INTO documents ({DOC_COLUMNS}, content_hash) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
CHINS = f"INSERT INTO chunks ({CHUNK_FIELDS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
def docs_(): conn.executemany(DOCINS, drows)
def chunks_(): conn.executemany(CHINS, crows)
def both(): docs_(); chunks_()
def fts_rows(): conn.executemany("INSERT INTO fts5_chunks (rowid, body) VALUES (?, ?)", [(i, r[2]) for i, r in zip(ids, crows)])
def fts_select(): conn.execute("INSERT INTO fts5_chunks (rowid, body) SELECT id, text FROM chunks WHERE id BETWEEN ? AND ?", (ids[0], ids[-1]))
def log(name): conn.execute("INSERT INTO vector_log (table_name, chunk_id) SELECT ?, value FROM json_each(?) ORDER BY key", (name, json.dumps(ids)))
def vec0_():
    for s in range(0, len(ids), 256):
        conn.executemany(f"INSERT INTO {table} (chunk_id, embedding, kind, created_at) VALUES (?,?,?,?)",
                         [(i, vecs[j].tobytes(), "NOTE", 1.7e9) for j, i in enumerate(ids[s:s+256], s)])
def blob_():
    for s in range(0, len(ids), 256):
        conn.executemany("INSERT INTO plainvec (chunk_id, embedding) VALUES (?,?)",
                         [(i, vecs[j].tobytes()) for j, i in enumerate(ids[s:s+256], s)])
conn.execute("CREATE TABLE IF NOT EXISTS plainvec (chunk_id INTEGER PRIMARY KEY, embedding BLOB)")
nothing = lambda: None
IDX = ["chunks_document", "chunks_kind_created", "chunks_created", "chunks_noncurrent", "chunks_turn"]
def drop(names): return lambda: [conn.execute(f"DROP INDEX {x}") for x in names]
def droptrig(): conn.execute("DROP TRIGGER chunks_log_insert")
for _ in range(R):
    timed("documents rows", nothing, docs_)
    timed("documents rows, no 2 secondary idx", drop(["documents_content_hash", "documents_kind_created"]), docs_)
    timed("chunks rows (after docs)", docs_, chunks_)
    timed("chunks rows, no trigger", lambda: (docs_(), droptrig()), chunks_)
    timed("chunks rows, no 5 idx", lambda: (docs_(), drop(IDX)()), chunks_)
    timed("chunks rows, no idx no trigger", lambda: (docs_(), drop(IDX)(), droptrig()), chunks_)
    timed("fts5 by rows", both, fts_rows)
    timed("fts5 by select", both, fts_select)
    timed("log 10k rows", nothing, lambda: log("x"))
    timed("vec0 10k (256 per stmt)", nothing, vec0_)
    timed("plain blob 10k", nothing, blob_)
    timed("everything, FTS5 by rows (before)", nothing, lambda: (both(), fts_rows(), vec0_()))
    timed("everything, FTS5 by select (after)", nothing, lambda: (both(), fts_select(), vec0_()))
print(f"load {os.getloadavg()[0]:.1f}")
for k, v in res.items():
    print(f"  {k:40} min {min(v):.3f} median {statistics.median(v):.3f}")
p.close(); shutil.rmtree(root, ignore_errors=True)
