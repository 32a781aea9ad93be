"""Round 7: the Python of a 10k ingest alone, per part, warm caches (thread CPU, min and
median of 7): preparing every batch (counting and chunking), the token ceilings, the
batch counters, the rows' values (``stored_params``, ``inherit``, ``chunk_params``), and
``_chunk``.

Run: ``PEERS_OUT=DIR python benchmarks/results/ingest/2026-12-03-round7/python_costs.py``.
"""
# ruff: noqa
import os, sys, time, statistics
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2] / "peers"))
import harness as H
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
from octomem.engine.writes import transactions, prepare
from octomem.plugins.sqlite.rows import stored_params
from octomem.engine.sql.rows import chunk_params, inherit
import shutil
n = 10000
texts = H.texts_for(n)
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(texts)]
root = H.OUT / f"pym{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
p = Pipeline(load_settings(None, {}), load_registry(), root)
p._token_counter()
batches = list(transactions(docs, None))
res = {}
def t(label, f, R=7):
    for _ in range(R):
        c = time.thread_time(); f(); res.setdefault(label, []).append(time.thread_time() - c)
emb = p.arms.embedder
def ceil_only():
    for b in batches:
        p._ceilings([x for d in b for x in (d.text, d.title or "")])
def counted():
    for b in batches: p._counted(b)
prep = None
def prepare_all():
    global prep
    prep = [prepare(p, b) for b in batches]
def fresh_counter():
    # cold per-word caches as in a fresh process
    from octomem.plugins.fastembed import wordpiece_count as wc
    c = emb._counter if hasattr(emb, "_counter") else None
t("prepare all (warm caches)", prepare_all)
t("ceilings", ceil_only)
t("_counted", counted)
def rows():
    for pr in prep:
        for d, own in zip(pr.batch, pr.chunks):
            params = stored_params(d, own)
            for c in own:
                ch = inherit(c, d)
                chunk_params(ch, params[5], params[8])
def rows_noinherit():
    for pr in prep:
        for d, own in zip(pr.batch, pr.chunks):
            params = stored_params(d, own)
            for c in own:
                chunk_params(c, params[5], params[8])
def docparams():
    for pr in prep:
        for d, own in zip(pr.batch, pr.chunks):
            stored_params(d, own)
t("rows python (stored_params+inherit+chunk_params)", rows)
t("  without inherit", rows_noinherit)
t("  stored_params only", docparams)
def chunk_only():
    for pr in prep:
        for d in pr.batch: p._chunk(d, pr.count)
t("_chunk only", chunk_only)
print(f"load {os.getloadavg()[0]:.2f}")
for k, v in res.items():
    print(f"  {k:50} min {min(v):.4f} median {statistics.median(v):.4f}")
p.close(); shutil.rmtree(root, ignore_errors=True)
