"""Round 6: 10k vector inserts (256 per ``executemany``, one transaction, rolled back) into a
vec0 table as octomem creates it (``kind`` and ``created_at`` metadata columns,
``chunk_size=256``), the same without the metadata columns, and a plain
``(chunk_id INTEGER PRIMARY KEY, embedding BLOB)`` table; process CPU s, min and median.

Run: ``PEERS_OUT=DIR nice -n 5 python benchmarks/results/ingest/2026-12-02-round6/vec0_costs.py [R]``.
"""
# ruff: noqa
from pathlib import Path
import gc, os, shutil, statistics, sys, time
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
import apsw, sqlite_vec
R = int(sys.argv[1]) if len(sys.argv) > 1 else 5
ids = list(range(1, 10001)); vecs = H.vectors_for(10000)
root = H.OUT / f"micro2{os.getpid()}"; shutil.rmtree(root, ignore_errors=True); root.mkdir(parents=True)
conn = apsw.Connection(str(root / "v.sqlite"))
conn.enable_load_extension(True); conn.load_extension(sqlite_vec.loadable_path())
conn.execute("PRAGMA journal_mode=WAL").fetchall()
conn.execute("CREATE VIRTUAL TABLE vm USING vec0(chunk_id INTEGER PRIMARY KEY, embedding float[384] distance_metric=cosine, kind TEXT, created_at FLOAT, chunk_size=256)")
conn.execute("CREATE VIRTUAL TABLE vn USING vec0(chunk_id INTEGER PRIMARY KEY, embedding float[384] distance_metric=cosine, chunk_size=256)")
conn.execute("CREATE TABLE pb (chunk_id INTEGER PRIMARY KEY, embedding BLOB)")
res = {}
def run(label, sql, row):
    conn.execute("BEGIN")
    t = time.process_time()
    for s in range(0, 10000, 256):
        conn.executemany(sql, [row(i, vecs[i - 1].tobytes()) for i in ids[s:s + 256]])
    res.setdefault(label, []).append(time.process_time() - t)
    conn.execute("ROLLBACK")
for _ in range(R):
    run("vec0 with kind, created_at", "INSERT INTO vm (chunk_id, embedding, kind, created_at) VALUES (?,?,?,?)", lambda i, b: (i, b, "NOTE", 1.7e9 + i))
    run("vec0 without metadata", "INSERT INTO vn (chunk_id, embedding) VALUES (?,?)", lambda i, b: (i, b))
    run("plain BLOB table", "INSERT INTO pb (chunk_id, embedding) VALUES (?,?)", lambda i, b: (i, b))
print(f"load {os.getloadavg()[0]:.1f}")
for k, v in res.items():
    print(f"  {k:34} min {min(v):.3f} median {statistics.median(v):.3f}")
shutil.rmtree(root, ignore_errors=True)
