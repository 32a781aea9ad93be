"""Round 6: the Python of the bulk ingest path for the harness's 10k one-chunk documents,
no SQL, process CPU s (min and median of R alternated runs): the batches' token counts
(``Pipeline._counted``: ceilings of texts and titles, the texts over budget counted; the
word cache warm after the first run), ``Pipeline._chunk`` of texts that fit, and the row
values the bulk writer builds (``stored_params``, ``inherit``, ``chunk_params``).

Run: ``PEERS_OUT=DIR nice -n 5 python benchmarks/results/ingest/2026-12-02-round6/python_costs.py [R]``.
"""
# ruff: noqa
from pathlib import Path
import os, shutil, statistics, sys, time, gc
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
from octomem.engine.sql.rows import chunk_params, inherit
from octomem.plugins.sqlite.rows import stored_params
texts = H.texts_for(10000)
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(texts)]
root = H.OUT / f"pyrows{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
p = Pipeline(load_settings(None, {}), load_registry(), root)
res = {}
def t(label, f):
    c = time.process_time(); f(); res.setdefault(label, []).append(time.process_time() - c)
counts = [p._counted(docs[s:s + 1024]) for s in range(0, 10000, 1024)]
def counted(): [p._counted(docs[s:s + 1024]) for s in range(0, 10000, 1024)]
def chunk(): return [p._chunk(d, counts[i // 1024]) for i, d in enumerate(docs)]
pairs = list(zip(docs, chunk()))
def rows():
    out = []
    for d, own in pairs:
        params = stored_params(d, own)
        for c in own:
            out.append(chunk_params(inherit(c, d), params[5], params[8]))
def docparams(): [stored_params(d, own) for d, own in pairs]
def inherits(): [inherit(own[0], d) for d, own in pairs]
for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 5):
    t("token counts (warm counter)", counted)
    t("_chunk (fits)", chunk)
    t("rows: stored_params+inherit+chunk_params", rows)
    t("  stored_params alone", docparams)
    t("  inherit alone", inherits)
print(f"load {os.getloadavg()[0]:.1f}")
for k, v in res.items():
    print(f"  {k:42} min {min(v):.3f} median {statistics.median(v):.3f}")
p.close(); shutil.rmtree(root, ignore_errors=True)
