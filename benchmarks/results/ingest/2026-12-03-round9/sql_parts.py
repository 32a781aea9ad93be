"""Round 9: thread CPU of each SQL part of the 10k ingest (``BEGIN``, the ``documents`` and
``chunks`` inserts with their indexes and trigger, FTS5's ``INSERT ... SELECT``, the change
log's rows and prune (where FTS5 flushes its segment: the next statement's savepoint),
``COMMIT``) on a store of this checkout's schema, rows built before the clock, and the
same with one thing changed per variant: ``notrigger``, ``noprune`` (the change-log
trigger without its prune), ``nohashidx`` (no ``documents_content_hash``), ``noidx`` (no
secondary index of the two tables), ``nofk``, ``nosecdel`` (``secure_delete`` off),
``cache`` (64 MiB page cache), ``am0``/``am16`` (FTS5 ``automerge``), ``pgsz4000``,
``ckpt10000`` (``wal_autocheckpoint``). Medians of R rounds.

Run: ``PEERS_OUT=DIR python sql_parts.py R base notrigger ...``

Round 11's ``sql_parts.py`` imports this file (:func:`main` with its own variants, a hook
after the ``chunks`` insert, and the pages SQLite wrote), and its ``jsonrows.py`` the rows
(:func:`built_rows`).
"""
# ruff: noqa
import json, os, shutil, sys, time, statistics
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
from octomem.engine.sql.rows import CHUNK_FIELDS, DOC_COLUMNS, chunk_params, inherit
from octomem.plugins.sqlite.rows import stored_params
from octomem.plugins.sqlite.bulk import insert_rows
n = 10000
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(H.texts_for(n))]
NOPRUNE = ("DROP TRIGGER chunks_log_insert; CREATE TRIGGER chunks_log_insert AFTER INSERT ON chunks "
           "BEGIN INSERT INTO vector_log (table_name, chunk_id) VALUES ('chunks', NEW.id); END")


def setup(conn, variant):
    """Change the fresh store as ``variant`` says (round 9's variants; ``base``: nothing)."""
    if variant == "notrigger":
        conn.execute("DROP TRIGGER chunks_log_insert")
    if variant == "noprune":
        conn.execute(NOPRUNE)
    if variant == "nohashidx":
        conn.execute("DROP INDEX documents_content_hash")
    if variant == "noidx":
        conn.execute("DROP INDEX documents_content_hash; DROP INDEX documents_kind_created; DROP INDEX chunks_kind_created; DROP INDEX chunks_created")
    if variant == "nofk":
        conn.execute("PRAGMA foreign_keys=OFF")
    if variant == "nosecdel":
        conn.execute("PRAGMA secure_delete=OFF")
    if variant == "cache":
        conn.execute("PRAGMA cache_size=-65536")
    if variant.startswith("am"):
        conn.execute(f"INSERT INTO fts5_chunks(fts5_chunks, rank) VALUES('automerge', {int(variant[2:])})")
    if variant.startswith("pgsz"):
        conn.execute(f"INSERT INTO fts5_chunks(fts5_chunks, rank) VALUES('pgsz', {int(variant[4:])})")
    if variant.startswith("ckpt"):
        conn.execute(f"PRAGMA wal_autocheckpoint={int(variant[4:])}")


def built_rows(p, docs):
    """Return the ``documents`` rows, the ``chunks`` rows and each document's end in the
    latter, of ``docs`` chunked by the pipeline ``p`` (round 11's ``jsonrows.py`` uses it)."""
    drows, crows, ends = [], [], [0]
    for d in docs:
        own = p._chunk(d)
        ends.append(ends[-1] + len(own)); params = stored_params(d, own); drows.append(params)
        crows += [chunk_params(inherit(c, d), params[5], params[8]) for c in own]
    return drows, crows, ends


def one(variant, setup=setup, after_chunks=None, pages=False):
    """Thread CPU of each part of one ingest's SQL on a fresh store changed by
    ``setup(conn, variant)``; ``after_chunks(conn, variant, first, rows)`` runs after each
    ``chunks`` insert, timed with it; ``pages``: also ``pagesK``, thousands of pages SQLite
    wrote from its cache (``SQLITE_DBSTATUS_CACHE_WRITE``)."""
    import apsw
    root = H.OUT / f"parts{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
    p = Pipeline(load_settings(None, {}), load_registry(), root)
    drows, crows, ends = built_rows(p, docs)
    conn = p.arms.storage.connection()
    setup(conn, variant)
    parts = {k: 0.0 for k in ("begin", "docs", "chunks", "fts", "log", "commit")}
    first = 1
    T = time.thread_time
    if pages:
        conn.status(apsw.SQLITE_DBSTATUS_CACHE_WRITE, True)
    t0 = T()
    for s in range(0, n, 1024):
        d_part = drows[s:s + 1024]; c_part = crows[ends[s]:ends[s + len(d_part)]]
        t = T(); conn.execute("BEGIN IMMEDIATE"); parts["begin"] += T() - t
        t = T(); insert_rows(conn, f"INSERT INTO documents ({DOC_COLUMNS}, content_hash)", 16, d_part); parts["docs"] += T() - t
        t = T(); insert_rows(conn, f"INSERT INTO chunks ({CHUNK_FIELDS})", 12, c_part)
        if after_chunks is not None:
            after_chunks(conn, variant, first, c_part)
        parts["chunks"] += T() - t
        last = first + len(c_part) - 1
        t = T()
        conn.execute("INSERT INTO fts5_chunks (rowid, body) SELECT id, CASE WHEN coalesce(title, '') = '' "
                     "THEN text ELSE title || char(10) || text END FROM chunks WHERE id BETWEEN ? AND ? "
                     "ORDER BY id", (first, last)); parts["fts"] += T() - t
        t = T()
        conn.execute("INSERT INTO vector_log (table_name, chunk_id) SELECT ?, value FROM json_each(?) ORDER BY key", ("fts5_chunks", json.dumps(list(range(first, last + 1)))))
        conn.execute("DELETE FROM vector_log WHERE seq <= (SELECT max(seq) FROM vector_log) - ?", (50000,)); parts["log"] += T() - t
        t = T(); conn.execute("COMMIT"); parts["commit"] += T() - t
        first = last + 1
    parts["total"] = T() - t0
    if pages:
        parts["pagesK"] = conn.status(apsw.SQLITE_DBSTATUS_CACHE_WRITE, False)[0] / 1000
    p.close(); shutil.rmtree(root, ignore_errors=True)
    return parts


def main(argv, run=one):
    """``argv``: ``[script, R, variant, ...]``; prints each variant's medians of R rounds of
    ``run(variant)``."""
    variants = argv[2:] or ["base"]
    R = int(argv[1])
    res = {}
    for r in range(R):
        for v in variants:
            res.setdefault(v, []).append(run(v))
    for v in variants:
        print(f"{v:10}", " ".join(f"{k} {statistics.median(x[k] for x in res[v]):.3f}" for k in res[v][0]), "load %.1f" % os.getloadavg()[0])


if __name__ == "__main__":
    main(sys.argv)
