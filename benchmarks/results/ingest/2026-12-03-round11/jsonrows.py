"""Round 11 micro: the ``documents`` and ``chunks`` rows of the 10k harness ingest written by
``insert_rows`` (values bound one by one: ``base``) or as one JSON parameter per table and
batch expanded by SQLite (``jsonb``: ``jsonb_each``; ``json``: ``json_each``; ``ordered``:
``jsonb_each ... ORDER BY key``), rows built before the clock; the writing thread's CPU and
wall, the encoding's wall (``dumps``), a digest of both tables (the same for every variant
within a run). ``SPIN=1``: a thread spinning Python beside the writer; ``SWI``: the switch
interval. Needs ``json-rows.patch`` applied (``PYTHONPATH`` = main with the patch).

Run: ``PEERS_OUT=DIR SPIN=0|1 SWI=0.005|0.0002 python jsonrows.py 3 base jsonb json``
"""
# ruff: noqa
import json, os, shutil, sys, time, statistics, threading
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
import apsw
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
from octomem.engine.sql.rows import CHUNK_FIELDS, DOC_COLUMNS
from octomem.plugins.sqlite.bulk import insert_rows
import importlib.util
_spec = importlib.util.spec_from_file_location(  # the rows as round 9's sql_parts.py builds them
    "round9_sql_parts", Path(__file__).resolve().parents[1] / "2026-12-03-round9" / "sql_parts.py")
R9 = importlib.util.module_from_spec(_spec); _spec.loader.exec_module(R9)
n = 10000
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(H.texts_for(n))]
R = int(sys.argv[1]); variants = sys.argv[2:]
spin = os.environ.get("SPIN") == "1"
sys.setswitchinterval(float(os.environ.get("SWI", "0.005")))
DCOLS = f"{DOC_COLUMNS}, content_hash"
def sel(width, fn):
    return ", ".join(f"value ->> {i}" for i in range(width))
def one(variant):
    root = H.OUT / f"jr{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
    p = Pipeline(load_settings(None, {}), load_registry(), root)
    drows, crows, ends = R9.built_rows(p, docs)
    conn = p.arms.storage.connection()
    batches = []
    tj = time.perf_counter()
    for s in range(0, n, 1024):
        d_part = drows[s:s + 1024]; c_part = crows[ends[s]:ends[s + len(d_part)]]
        if variant == "base":
            batches.append((d_part, c_part))
        else:
            from octomem.plugins.sqlite.json_rows import encode
            batches.append((encode(d_part), encode(c_part)))
    tj = time.perf_counter() - tj
    fn = "json_each" if variant == "json" else "jsonb_each"
    order = " ORDER BY key" if variant == "ordered" else ""
    stop = False
    def spinner():
        x = 0
        while not stop: x += 1
    th = threading.Thread(target=spinner)
    if spin: th.start()
    T = time.thread_time; t0 = T(); w0 = time.perf_counter()
    for d_part, c_part in batches:
        conn.execute("BEGIN IMMEDIATE")
        if variant == "base":
            insert_rows(conn, f"INSERT INTO documents ({DCOLS})", 16, d_part)
            insert_rows(conn, f"INSERT INTO chunks ({CHUNK_FIELDS})", 12, c_part)
        else:
            conn.execute(f"INSERT INTO documents ({DCOLS}) SELECT {sel(16, fn)} FROM {fn}(?){order}", (d_part,))
            conn.execute(f"INSERT INTO chunks ({CHUNK_FIELDS}) SELECT {sel(12, fn)} FROM {fn}(?){order}", (c_part,))
        conn.execute("COMMIT")
    cpu, wall = T() - t0, time.perf_counter() - w0
    stop = True
    if spin: th.join()
    dig = hash(tuple(conn.execute("SELECT * FROM documents ORDER BY rowid").fetchall())) ^ hash(tuple(conn.execute("SELECT * FROM chunks ORDER BY rowid").fetchall()))
    p.close(); shutil.rmtree(root, ignore_errors=True)
    return cpu, wall, tj, dig
res = {}
for r in range(R):
    for v in variants:
        res.setdefault(v, []).append(one(v))
for v in variants:
    x = res[v]
    print(f"{v:6} cpu {statistics.median(a[0] for a in x):.3f} wall {statistics.median(a[1] for a in x):.3f} dumps {statistics.median(a[2] for a in x):.3f} digest {x[0][3] & 0xffff:x} spin {spin} load {os.getloadavg()[0]:.1f}")
