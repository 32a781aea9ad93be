"""Round 7: SQLite's own minimum for a 10k ingest excluding embedding, in a bare apsw
script, against LanceDB's time on the same rows.

The harness's 10,000 documents (``benchmarks/results/peers/harness.py``), their rows built
*before* the clock exactly as octomem stores them (``documents`` and ``chunks`` values,
schema and triggers of a store opened by this checkout), then, timed (process CPU and wall),
only the SQL of ``ingest``: per transaction of 1,024 documents the ``documents`` and
``chunks`` inserts (``executemany``), FTS5 by one ``INSERT ... SELECT``, the change-log
rows, ``COMMIT``; then the vectors in transactions of 256 (as the harness writes them) by
vec0 ``INSERT`` (``executemany``) or by whole blocks (``plugins/sqlite_vec/vec0_writer``),
with their change-log rows. No Python per document inside the clock besides apsw's
binding of pre-built tuples. LanceDB: ``harness.py ingest lance`` in the same run.

Run: ``PEERS_OUT=DIR python benchmarks/results/ingest/2026-12-03-round7/sql_floor.py [R]``
(R rounds, alternated, fresh stores; medians).
"""
# ruff: noqa
from pathlib import Path
import json, os, re, shutil, statistics, subprocess, sys, time
HERE = Path(__file__).resolve()
sys.path.insert(0, str(HERE.parents[2] / "peers"))
import harness as H
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
from octomem.engine.sql.rows import CHUNK_FIELDS, DOC_COLUMNS, chunk_params, inherit
from octomem.plugins.sqlite.rows import stored_params
from octomem.plugins.sqlite_vec import vec0_writer

R = int(sys.argv[1]) if len(sys.argv) > 1 else 3
n = 10000
texts = H.texts_for(n)
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(texts)]
vecs = H.vectors_for(2 * n)  # 10,021 chunks; the first m rows are vectors_for(m)
DOCINS = f"INSERT INTO documents ({DOC_COLUMNS}, content_hash) VALUES ({','.join('?' * 16)})"
CHINS = f"INSERT INTO chunks ({CHUNK_FIELDS}) VALUES ({','.join('?' * 12)})"
LOG = "INSERT INTO vector_log (table_name, chunk_id) SELECT ?, value FROM json_each(?) ORDER BY key"


def one(vectors):
    root = H.OUT / f"floor{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
    p = Pipeline(load_settings(None, {}), load_registry(), root)
    pairs = [(d, p._chunk(d)) for d in docs]
    drows, crows, ends = [], [], [0]
    for d, own in pairs:
        ends.append(ends[-1] + len(own))
        params = stored_params(d, own)
        drows.append(params)
        crows += [chunk_params(inherit(c, d), params[5], params[8]) for c in own]
    table = p.arms.semantic.bound.table
    conn = p.arms.storage.connection()
    kinds = [r[3] for r in crows]; created = [r[5] for r in crows]
    t, c = time.perf_counter(), time.process_time()
    first = 1
    for s in range(0, n, 1024):
        d_part = drows[s:s + 1024]
        c_part = crows[ends[s]:ends[s + len(d_part)]]
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(DOCINS, d_part)
        conn.executemany(CHINS, c_part)
        last = first + len(c_part) - 1
        conn.execute("INSERT INTO fts5_chunks (rowid, body) SELECT id, CASE WHEN coalesce(title, '') = '' "
                     "THEN text ELSE title || char(10) || text END FROM chunks WHERE id BETWEEN ? AND ? "
                     "ORDER BY id", (first, last))
        conn.execute(LOG, ("fts5_chunks", json.dumps(list(range(first, last + 1)))))
        conn.execute("COMMIT")
        first = last + 1
    rows_wall, rows_cpu = time.perf_counter() - t, time.process_time() - c
    ids = list(range(1, len(crows) + 1))
    t, c = time.perf_counter(), time.process_time()
    for s in range(0, len(ids), 256):
        conn.execute("BEGIN IMMEDIATE")
        part = ids[s:s + 256]
        if vectors == "vec0 INSERT":
            conn.executemany(f"INSERT INTO {table} (chunk_id, embedding, kind, created_at) VALUES (?,?,?,?)",
                             [(i, vecs[i - 1].tobytes(), kinds[i - 1], created[i - 1]) for i in part])
        else:
            vec0_writer.write_blocks(conn, table, 256, part, vecs[s:s + len(part)], kinds[s:s + len(part)],
                                     created[s:s + len(part)])
        conn.execute(LOG, (table, json.dumps(part)))
        conn.execute("COMMIT")
    vec_wall, vec_cpu = time.perf_counter() - t, time.process_time() - c
    assert conn.execute("SELECT count(*) FROM chunks").get == len(crows)
    p.close(); shutil.rmtree(root, ignore_errors=True)
    return rows_wall, rows_cpu, vec_wall, vec_cpu


def lance():
    out = subprocess.run([sys.executable, str(HERE.parents[2] / "peers" / "harness.py"), "ingest", "lance",
                          str(n)], env=dict(os.environ, RUST_LOG="error"), capture_output=True, text=True,
                         check=True).stdout
    return float(re.search(r"total ([0-9.]+)", out).group(1)), float(re.search(r"cpu ([0-9.]+)", out).group(1))


got = {}
for r in range(R):
    for label in ("vec0 INSERT", "vec0 blocks"):
        got.setdefault(label, []).append(one(label))
    got.setdefault("lance", []).append(lance())
    print(f"round {r + 1} load {os.getloadavg()[0]:.2f}", flush=True)
print(f"n={n} chunks, load {os.getloadavg()[0]:.2f}; medians of {R} (wall / process CPU, s)")
for label in ("vec0 INSERT", "vec0 blocks"):
    rw, rc, vw, vc = (statistics.median(x[i] for x in got[label]) for i in range(4))
    print(f"  bare SQL, vectors by {label:12}: rows+FTS5 {rw:.3f} / {rc:.3f}, vectors {vw:.3f} / {vc:.3f}, "
          f"total {rw + vw:.3f} / {rc + vc:.3f}")
print(f"  LanceDB: total {statistics.median(x[0] for x in got['lance']):.3f} / "
      f"{statistics.median(x[1] for x in got['lance']):.3f}")
