"""Round 10: the token counting of the 10k ingest's 10 batches by part, thread CPU, least of
R rounds (a fresh pipeline each): the counter's load (``tokenizer.json``, or its cached
compact copy since this round), the run entries (``shorter_words``), the character
ceilings of every text, the refined ceilings (characters included), the exact counts of
the texts still over budget (cold caches), and ``BatchCounts`` over the batches again
(warm caches).

Run: ``PEERS_OUT=DIR python count_parts.py [R]`` (``PYTHONPATH=MAIN`` for main).
"""
# ruff: noqa
import os, shutil, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
import octomem.engine.writes as W
from octomem.plugins.fastembed import wordpiece_count as WC
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(H.texts_for(10000))]
batches = list(W.transactions(docs, None))
T = time.thread_time
R = int(sys.argv[1]) if len(sys.argv) > 1 else 5
best = {}
for r in range(R):
    root = H.OUT / f"cp{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
    p = Pipeline(load_settings(None, {}), load_registry(), root)
    parts = {}
    t = T(); p._token_counter(); parts["load counter"] = T() - t
    emb = p.arms.embedder
    t = T(); c = emb._get_counter(); c._shorter_words(); parts["shorter dict"] = T() - t
    texts = [[d.text for d in b] for b in batches]
    t = T()
    for ts in texts: c.ceilings(ts, None)
    parts["char ceilings"] = T() - t
    t = T()
    bounds = [c.ceilings(ts, 254) for ts in texts]
    parts["refined ceilings (incl char)"] = T() - t
    over = [[x for x, b in zip(ts, bs) if b > 254] for ts, bs in zip(texts, bounds)]
    parts["n over"] = sum(map(len, over))
    t = T()
    for o in over: c.count(o)
    parts["exact counts"] = T() - t
    t = T()
    for b in batches: p._counted(b)
    parts["BatchCounts warm"] = T() - t
    p.close(); shutil.rmtree(root, ignore_errors=True)
    for k, v in parts.items(): best[k] = min(best.get(k, 9e9), v)
for k, v in best.items(): print(f"{k:32} {v:.4f}")
