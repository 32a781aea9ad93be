"""Round 5's isolated measurements (issue 15, ingest excluding embedding), each variant
alternated with the others in one process, process CPU seconds, min and median of R runs:

- ``chunks``: 10,000 ``chunks`` rows (the harness's texts, as ingest writes them) by one
  ``executemany`` into a store of the current schema, with ``RETURNING id`` (before) and
  without (after: ids from the sequence, ``plugins/sqlite/bulk.py``), foreign keys off,
  and the change-log trigger without its prune; rolled back each time.
- ``ceilings``: the word-by-word token ceiling of the 10k texts' plain ones over the
  budget by characters, all pre-tokens looked up (before) or the words of 2+ letters and
  digits only (after: ``WordPieceCounter._word_ceiling``); the values are checked equal.
- ``fts5``: 10,000 texts into a contentless ``porter unicode61`` FTS5 table in
  transactions of 1,024 (as ingest does), with FTS5's default ``automerge`` (4), with
  ``automerge`` 0, and 0 followed by a ``merge``; then 100 one-word queries (bm25, top 10).

Run: ``nice -n 5 python benchmarks/results/ingest/2026-12-02/micro.py [R]`` (default 5).
"""
# ruff: noqa
import json, os, shutil, statistics, sys, time
from pathlib import Path

import apsw

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.sql.rows import CHUNK_FIELDS
from octomem.engine.types import Document
from octomem.plugins.fastembed import wordpiece_count as W
from octomem.plugins.fastembed.embedder import FastembedEmbedder
from octomem.plugins.sqlite.bulk import insert_chunks

R = int(sys.argv[1]) if len(sys.argv) > 1 else 5
texts = H.texts_for(10000)
base = H.OUT / f"micro{os.getpid()}"
shutil.rmtree(base, ignore_errors=True)
res: dict[str, list[float]] = {}


def report():
    for k, v in res.items():
        print(f"  {k:34} min {min(v):.3f} median {statistics.median(v):.3f}")
    res.clear()


# chunks
p = Pipeline(load_settings(None, {}), load_registry(), base / "store")
p.add([Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(texts)],
      embed=False)
conn = p.arms.storage.connection()
rows = conn.execute(f"SELECT {CHUNK_FIELDS} FROM chunks ORDER BY id").fetchall()
ins = f"INSERT INTO chunks ({CHUNK_FIELDS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
trigger = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_log_insert'").get


def timed(label, f, fk=True, sql=None):
    conn.execute(f"PRAGMA foreign_keys={'ON' if fk else 'OFF'}")
    conn.execute("BEGIN IMMEDIATE")
    if sql:
        conn.execute("DROP TRIGGER chunks_log_insert; " + sql)
    t = time.process_time()
    f()
    res.setdefault(label, []).append(time.process_time() - t)
    conn.execute("ROLLBACK")
    conn.execute("PRAGMA foreign_keys=ON")


noprune = ("CREATE TRIGGER chunks_log_insert AFTER INSERT ON chunks BEGIN INSERT INTO vector_log "
           "(table_name, chunk_id) VALUES ('chunks', NEW.id); END")
for _ in range(R):
    timed("RETURNING id (before)", lambda: list(conn.executemany(ins + " RETURNING id", rows)))
    timed("ids from the sequence (after)", lambda: insert_chunks(conn, rows))
    timed("after, foreign keys off", lambda: insert_chunks(conn, rows), fk=False)
    timed("after, trigger without prune", lambda: insert_chunks(conn, rows), sql=noprune)
print(f"chunks: {len(rows)} rows, load {os.getloadavg()[0]:.1f}")
report()
p.close()

# ceilings
counter = FastembedEmbedder()
counter.count_tokens(["probe"])
c = counter._get_counter()
long = [t for t in texts if W.plain(t) and len(t) - t.count(" ") - t.count("\n") > 254]


def before(text):
    words = W._PRE_TOKEN.findall(text.lower())
    known = list(filter(c._vocab.__contains__, words))
    return sum(map(len, words)) - sum(map(len, known)) + len(known)


assert [before(t) for t in long] == [c._word_ceiling(t) for t in long]
for _ in range(R):
    for label, f in (("all pre-tokens (before)", before), ("2+ character words (after)", c._word_ceiling)):
        t = time.process_time()
        [f(x) for x in long]
        res.setdefault(label, []).append(time.process_time() - t)
print(f"ceilings: {len(long)} plain texts over budget by characters, load {os.getloadavg()[0]:.1f}")
report()

# fts5
words = ["protein", "cell", "cancer", "risk", "gene"]
for r in range(R):
    for label, automerge, merge in (("automerge 4 (default)", None, False), ("automerge 0", 0, False),
                                    ("automerge 0, then merge", 0, True)):
        db = apsw.Connection(str(base / f"fts{r}{automerge}{merge}.db"))
        db.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL")
        db.execute("CREATE VIRTUAL TABLE f USING fts5(body, content='', contentless_delete=1, "
                   "tokenize='porter unicode61')")
        if automerge is not None:
            db.execute("INSERT INTO f(f, rank) VALUES('automerge', ?)", (automerge,))
        t = time.process_time()
        for s in range(0, len(texts), 1024):
            with db:
                db.executemany("INSERT INTO f(rowid, body) VALUES (?, ?)",
                               [(i + 1, texts[i]) for i in range(s, min(s + 1024, len(texts)))])
        if merge:
            with db:
                db.execute("INSERT INTO f(f, rank) VALUES('merge', 100000)")
        res.setdefault(label + ": write", []).append(time.process_time() - t)
        t = time.process_time()
        for _ in range(20):
            for w in words:
                db.execute("SELECT rowid, bm25(f) FROM f WHERE f MATCH ? ORDER BY bm25(f) LIMIT 10",
                           (w,)).fetchall()
        res.setdefault(label + ": 100 queries", []).append(time.process_time() - t)
        db.close()
print(f"fts5: {len(texts)} texts, load {os.getloadavg()[0]:.1f}")
report()
shutil.rmtree(base, ignore_errors=True)
