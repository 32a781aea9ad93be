"""Round 6: what a plain BLOB table would cost the cold (vec0) search path: 100k random
384-d vectors inserted (transactions of 1,024) into octomem's vec0 layout and into a plain
table, then 20 queries x 3 asked of vec0's KNN (k = 10) and of a full scan ordered by
sqlite-vec's ``vec_distance_cosine`` over the plain table (same top 10 checked), p50 wall ms.

Run: ``PEERS_OUT=DIR nice -n 5 python benchmarks/results/ingest/2026-12-02-round6/plain_knn.py``.
"""
# ruff: noqa
from pathlib import Path
import os, shutil, statistics, sys, time
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
import apsw, sqlite_vec, numpy as np
N = 100_000
vecs = H.vectors_for(N)
root = H.OUT / f"knn{os.getpid()}"; shutil.rmtree(root, ignore_errors=True); root.mkdir(parents=True)
conn = apsw.Connection(str(root / "v.sqlite"))
conn.enable_load_extension(True); conn.load_extension(sqlite_vec.loadable_path())
conn.execute("PRAGMA journal_mode=WAL").fetchall()
conn.execute("CREATE VIRTUAL TABLE vm USING vec0(chunk_id INTEGER PRIMARY KEY, embedding float[384] distance_metric=cosine, kind TEXT, created_at FLOAT, chunk_size=256)")
conn.execute("CREATE TABLE pb (chunk_id INTEGER PRIMARY KEY, embedding BLOB NOT NULL)")
for name, sql, row in (("vec0", "INSERT INTO vm (chunk_id, embedding, kind, created_at) VALUES (?,?,?,?)", lambda i: (i, vecs[i - 1].tobytes(), "NOTE", 1.7e9 + i)),
                       ("plain", "INSERT INTO pb (chunk_id, embedding) VALUES (?,?)", lambda i: (i, vecs[i - 1].tobytes()))):
    t = time.process_time()
    for s in range(1, N + 1, 1024):
        with conn:
            conn.executemany(sql, [row(i) for i in range(s, min(N + 1, s + 1024))])
    print(f"insert {N} {name}: {time.process_time() - t:.2f} s CPU")
qs = H.vectors_for(20, seed=9)
res = {}
for r in range(3):
    for name, sql in (("vec0 KNN", "SELECT chunk_id, distance FROM vm WHERE embedding MATCH ? AND k = 10 ORDER BY distance"),
                      ("plain scan vec_distance_cosine", "SELECT chunk_id, vec_distance_cosine(embedding, ?) AS d FROM pb ORDER BY d LIMIT 10")):
        for q in qs:
            t = time.perf_counter(); got = conn.execute(sql, (q.tobytes(),)).fetchall()
            res.setdefault(name, []).append((time.perf_counter() - t) * 1e3)
a = conn.execute("SELECT chunk_id FROM vm WHERE embedding MATCH ? AND k = 10 ORDER BY distance", (qs[0].tobytes(),)).fetchall()
b = conn.execute("SELECT chunk_id FROM pb ORDER BY vec_distance_cosine(embedding, ?) LIMIT 10", (qs[0].tobytes(),)).fetchall()
print("same top 10:", a == b, f"load {os.getloadavg()[0]:.1f}")
for k, v in res.items():
    print(f"  {k:32} p50 {statistics.median(v):.1f} ms")
shutil.rmtree(root, ignore_errors=True)
