"""Digest every table of a store an ingest writes, row by row (round 8, Dec 3).

Ingests, through ``Pipeline.add(embed=False)`` and then the vectors as
``benchmarks/results/peers/harness.py ingest`` writes them (transactions of 256), four
corpora into one fresh store: the harness's N one-chunk documents, the first 300
LongMemEval sessions (long: split into several chunks), 200 documents with titles, tags,
URIs, event times and nested metadata, and 200 texts beyond ASCII (accents, Greek, CJK,
curly quotes); every ``created_at`` fixed. Then prints a sha256 digest of every table of
the SQLite file (FTS5's and vec0's shadow tables, the change log, ``sqlite_sequence``
included; ``meta``'s random ``store_id`` and ``vector_sets``' creation time left out), each read ``SELECT * ...
ORDER BY rowid`` (or by every column for a table without rowid).

Run with and without an older checkout on ``PYTHONPATH`` (a folder holding
``octomem/{engine,plugins,mcp_server,benchmarks}``) and compare the two outputs:
``PEERS_OUT=DIR python benchmarks/results/ingest/store_digest.py 10000``.
"""
# ruff: noqa
import hashlib, json, os, random, shutil, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "peers"))
import harness as H
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document

n = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}, created_at=1.7e9 + i)
        for i, t in enumerate(H.texts_for(n))]
with open(H.DATA / "longmemeval/corpus.jsonl") as rows:
    docs += [Document(json.loads(next(rows))["text"], id=f"lme{i}", created_at=1.6e9 + i)
             for i in range(300)]
rng = random.Random(8)
base = H.base_texts()
for i in range(200):
    docs.append(Document(
        " ".join(rng.sample(base, rng.randint(1, 6))), id=f"t{i}", title=f"Title {i} " * rng.randint(1, 30),
        uri=f"file:///x/{i}.md", kind=rng.choice(["ITEM", "NOTE", "FACT"]),
        tags=tuple(rng.sample(["a", "b", "c", "δ"], rng.randint(0, 3))), created_at=1.5e9 + i,
        event_time=(1.4e9 + i) if i % 3 else None,
        metadata={"n": i, "f": i / 7, "nested": {"x": [1, 2, {"y": "é"}]}, "b": i % 2 == 0}))
odd = ["café", "α-helix", "βcell", "中文", "naïve", "“quoted”", "—", "…", "Ωmega", "straße", "İ"]
for i in range(200):
    words = [rng.choice(odd) if rng.random() < 0.2 else w for w in rng.choice(base).split()]
    docs.append(Document(" ".join(words * rng.randint(1, 4)), id=f"u{i}", created_at=1.3e9 + i))

root = H.OUT / f"store-digest{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
p = Pipeline(load_settings(None, {}), load_registry(), root)
rep = p.add(docs, embed=False)
st, sem = p.arms.storage, p.arms.semantic
ids = sorted(rep.chunk_ids); vecs = H.vectors_for(len(ids))
for s in range(0, len(ids), 256):
    with st.transaction() as tx:
        sem.add(tx, ids[s:s + 256], vecs[s:s + 256])
conn = st.connection()
conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
tables = [r[0] for r in conn.execute(
    "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
print(f"documents {len(docs)} chunks {len(ids)} src {Path(H.__file__).name} "
      f"octomem {Path(__import__('octomem.engine').engine.__file__).parent}")
for t in tables:
    try:
        rows = conn.execute(f'SELECT * FROM "{t}" ORDER BY rowid').fetchall()
    except Exception:
        try:
            rows = sorted(conn.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr)
        except Exception as exc:  # a virtual table that cannot be read whole
            print(f"{t:45} (not read: {type(exc).__name__})"); continue
    if t == "meta":  # a random id per store
        rows = [r for r in rows if r[0] != "store_id"]
    if t == "vector_sets":  # (model, dimension, table, created): the time left out
        rows = [r[:-1] for r in rows]
    if t == "vector_log":  # a write transaction's seal (since Dec 4): a random number
        rows = [(seq, name, 0 if name == "txn" else chunk) for seq, name, chunk in rows]
    print(f"{t:45} rows {len(rows):7} sha256 {hashlib.sha256(repr(rows).encode()).hexdigest()[:16]}")
p.close(); shutil.rmtree(root, ignore_errors=True)
