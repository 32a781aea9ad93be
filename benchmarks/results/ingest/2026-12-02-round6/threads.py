"""Round 6: can a second thread overlap the Python of one batch with the SQLite of another?
In one process: the token ceilings of the harness's 10k texts (Python) and a 10k SQL write,
first one after the other, then at once in two threads; the write is the 10k ``chunks``
rows by one ``executemany`` (apsw releases the GIL around each row's step), or the FTS5
fill of those rows by one ``INSERT ... SELECT`` (one step: the GIL free throughout). Wall
ms of each part and of the pair, min of R rounds alternated, each write rolled back.

Run: ``PEERS_OUT=DIR nice -n 5 python benchmarks/results/ingest/2026-12-02-round6/threads.py [R]``.
"""
# ruff: noqa
from pathlib import Path
import os, shutil, sys, threading, time
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
from octomem.engine.sql.rows import CHUNK_FIELDS

R = int(sys.argv[1]) if len(sys.argv) > 1 else 5
texts = H.texts_for(10000)
root = H.OUT / f"threads{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
p = Pipeline(load_settings(None, {}), load_registry(), root)
p.add([Document("one", id="d")], embed=False)
counter = p.arms.embedder._get_counter(); budget = p.arms.embedder.max_tokens
conn = p.arms.storage.connection()
rows = [("d", i + 1, t, "NOTE", "[]", 1.7e9, None, None, "{}", 1.7e9, None, 1)
        for i, t in enumerate(texts)]
CH = f"INSERT INTO chunks ({CHUNK_FIELDS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
first = conn.execute("SELECT max(id) FROM chunks").get + 1


def py():
    counter.ceilings(texts, budget)


def rows_write():
    conn.executemany(CH, rows)


def fts_write():
    conn.execute("INSERT INTO fts5_chunks (rowid, body) SELECT id, text FROM chunks "
                 "WHERE id BETWEEN ? AND ?", (first, first + len(rows) - 1))


def timed(f):
    t = time.perf_counter(); f(); return time.perf_counter() - t


def pair(sql, setup):
    conn.execute("BEGIN IMMEDIATE"); setup()
    a = timed(py); b = timed(sql)
    conn.execute("ROLLBACK")
    conn.execute("BEGIN IMMEDIATE"); setup()
    worker = threading.Thread(target=sql)
    t = time.perf_counter(); worker.start(); py(); worker.join(); both = time.perf_counter() - t
    conn.execute("ROLLBACK")
    return a, b, both


out = {}
for _ in range(R):
    for name, sql, setup in (("chunks rows (executemany)", rows_write, lambda: None),
                             ("FTS5 fill (INSERT ... SELECT)", fts_write, rows_write)):
        out.setdefault(name, []).append(pair(sql, setup))
print(f"load {os.getloadavg()[0]:.1f}")
for name, runs in out.items():
    a, b, both = (min(r[i] for r in runs) * 1e3 for i in range(3))
    print(f"  {name:30} python {a:.0f} ms, sql {b:.0f} ms, one after the other {a + b:.0f}, "
          f"two threads {both:.0f} ms")
p.close(); shutil.rmtree(root, ignore_errors=True)
