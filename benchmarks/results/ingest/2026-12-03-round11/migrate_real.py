"""Round 11: a real store made by the previous schema (main before this round, on
``PYTHONPATH``) opened by this checkout: the content-hash index swapped in the opening
transaction, and the same answers.

``make DIR``: ingest the harness's 10k documents and 3 statements,
forget one, then print the answers. ``check DIR``: open the same store with
this checkout, print its indexes and the same answers (``diff`` the two outputs).
Answers: find_documents of 200 stored texts and 2 absent ones, 20 searches (ids and
scores), the stored counts and the integrity check (``octomem verify`` apart).
"""
# ruff: noqa
import hashlib, json, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document, Query

mode, root = sys.argv[1], Path(sys.argv[2])
texts = H.texts_for(10000)
settings = load_settings(None, {})
p = Pipeline(settings, load_registry(), root)
st = p.arms.storage
if mode == "make":
    p.add([Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}, created_at=1.7e9 + i)
           for i, t in enumerate(texts)], embed=False)
    p.add([Document("the meeting moved to Friday", id="s1", created_at=1.8e9),
           Document("the meeting moved to Monday", id="s2", created_at=1.8e9 + 1),
           Document("a statement to forget", id="s3", created_at=1.8e9 + 2)], embed=False)
    with st.transaction() as tx:
        st.delete_document(tx, "s3")
conn = st.connection()
print("indexes", sorted(r[0] for r in conn.execute(
    "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'documents' AND sql IS NOT NULL")))
found = [[d.id for d in st.find_documents(t)] for t in texts[:200]]
found += [[d.id for d in st.find_documents(t)] for t in ("the meeting moved to Friday", "a statement to forget", "absent")]
print("find_documents", hashlib.sha256(json.dumps(found).encode()).hexdigest()[:16], found[:3], found[-3:])
runs = []
for q in H.queries()[:20]:
    hits = p.arms.keyword.search(q, __import__("octomem.engine.types", fromlist=["Filters"]).Filters(), 10)
    runs.append([(h.chunk_id, round(h.score, 9)) for h in hits])
print("searches", hashlib.sha256(json.dumps(runs).encode()).hexdigest()[:16])
print("counts", conn.execute("SELECT count(*) FROM documents").get, conn.execute("SELECT count(*) FROM chunks").get,
      st.history_counts())
print("integrity", conn.execute("PRAGMA integrity_check").get)
p.close()
