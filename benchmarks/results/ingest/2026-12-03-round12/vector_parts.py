"""Round 12: the vectors of the 10k ingest as ``harness.py ingest`` writes them (40
transactions of 256 through ``sqlite-vec``'s ``add``), thread CPU by part, least of 5 (a
fresh store each, the rows written first): ``_checked`` (the rows' shape, finite and
non-zero check), ``chunk_fields`` (the chunks' ``kind`` / ``created_at`` and which hold a
vector), ``insert_new`` (the vec0 blocks; ``write_blocks``, ``_rowids``, ``block_size``,
``newest_block`` inside it), ``log record`` (the change log), ``tx begin``, ``commit``;
``add`` is the arm's whole call.

Run: ``PEERS_OUT=DIR python vector_parts.py`` (``PYTHONPATH=MAIN`` for main).
"""
# ruff: noqa
import os, shutil, sys, time, collections
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2] / "peers"))
import harness as H
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
import octomem.plugins.sqlite_vec.arm as A, octomem.plugins.sqlite_vec.vec0_writer as VW, octomem.plugins.sqlite_vec.tables as TB
n=10000
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(H.texts_for(n))]
acc = collections.Counter()
T = time.thread_time
def wrap(mod, name, label):
    f = getattr(mod, name)
    def w(*a, **k):
        t = T(); r = f(*a, **k); acc[label] += T() - t; return r
    setattr(mod, name, w)
wrap(A, "chunk_fields", "chunk_fields"); wrap(A, "insert_new", "insert_new"); wrap(VW, "block_size", "  block_size"); wrap(VW, "newest_block", "  newest_block")
wrap(VW, "write_blocks", "  write_blocks"); wrap(VW, "fill_tail", "  fill_tail"); wrap(VW, "_rowids", "    _rowids")
wrap(A.vector_log, "record", "log record")
wrap(A.SqliteVecSemanticArm, "_checked", "_checked")
best = collections.Counter()
for r in range(5):
    root = H.OUT / f"vp{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
    p = Pipeline(load_settings(None, {}), load_registry(), root)
    spare = H.vectors_for(2 * n)
    rep = p.add(docs, embed=False)
    sem, st = p.arms.semantic, p.arms.storage
    ids = rep.chunk_ids; vecs = spare[:len(ids)]
    acc.clear()
    t = time.perf_counter(); c = T()
    for s in range(0, len(ids), 256):
        t0 = T()
        with st.transaction() as tx:
            t1 = T()
            sem.add(tx, ids[s:s + 256], vecs[s:s + 256])
            t2 = T()
        acc["tx begin"] += t1 - t0; acc["commit"] += T() - t2; acc["add"] += t2 - t1
    acc["TOTAL wall"] = time.perf_counter() - t; acc["TOTAL cpu"] = T() - c
    for k, v in acc.items(): best[k] = min(best.get(k, 9), v)
    p.close(); shutil.rmtree(root, ignore_errors=True)
for k, v in sorted(best.items()): print(f"{k:20} {v:.4f}")
