"""Round 13: the token ceilings of the 10k ingest's batches, text by text in Python (round 12's
``WordPieceCounter.ceilings(texts, 254)``) against whole batches by numpy
(``WordPieceCounter.batch_ceilings(texts, 254)``, what ``token_ceilings`` gives now): thread
CPU, least of R rounds; how many texts each leaves over the budget (those are counted
exactly), how many of those the tokenizer really puts over it, and that no array ceiling
is below the exact count.

Run: ``PEERS_OUT=DIR python ceilings.py [R]`` (under ``chrt -f 10`` for a quiet figure).
"""
# ruff: noqa
import os, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
from octomem.plugins.fastembed.embedder import FastembedEmbedder

R = int(sys.argv[1]) if len(sys.argv) > 1 else 7
counter = FastembedEmbedder()._get_counter()
texts = H.texts_for(10000)
batches = [texts[i:i + 1024] for i in range(0, len(texts), 1024)]
T = time.thread_time
t = T(); counter.batch_ceilings(texts[:1], 254); tables = T() - t
best = {}
for r in range(R):
    t = T(); text_by_text = [counter.ceilings(b, 254) for b in batches]; got_old = T() - t
    t = T(); arrays = [counter.batch_ceilings(b, 254) for b in batches]; got_new = T() - t
    best["text by text"] = min(best.get("text by text", 9.0), got_old)
    best["arrays"] = min(best.get("arrays", 9.0), got_new)
old, new = sum(text_by_text, []), sum(arrays, [])
exact = counter.count(texts)
assert all(c >= n for c, n in zip(new, exact)), "a ceiling below the count"
print(f"least of {R}, thread CPU s, load {os.getloadavg()[0]:.1f}; the arrays' tables built once: {tables:.4f} s")
for k, v in best.items():
    print(f"  {k:13s} {v:.4f}")
print(f"texts over 254 by ceiling: text by text {sum(c > 254 for c in old)}, arrays {sum(c > 254 for c in new)}; "
      f"by the tokenizer's count {sum(n > 254 for n in exact)}; array ceiling below text by text's: "
      f"{sum(a < b for a, b in zip(new, old))}, above: {sum(a > b for a, b in zip(new, old))}")
