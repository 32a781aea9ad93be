"""Round 6: token counting in a fresh process, the bundled counter against the ``tokenizers``
library's Rust tokenizer: loading the counter, the ceilings of the harness's 10k texts,
the exact count of the texts still over budget (a cold word cache), building the Rust
tokenizer, and its ``encode_batch`` (and ``encode`` one by one) of the texts over budget
by characters; process CPU s (``encode_batch`` wall beside).

Run: ``PEERS_OUT=DIR nice -n 5 python benchmarks/results/ingest/2026-12-02-round6/tokenizer_costs.py``.
"""
# ruff: noqa
from pathlib import Path
import os, sys, time
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
from octomem.plugins.fastembed.embedder import FastembedEmbedder
texts = H.texts_for(10000)
e = FastembedEmbedder()
t = time.process_time(); c = e._get_counter(); print("counter load", round(time.process_time() - t, 3))
t = time.process_time(); ceil = c.ceilings(texts, e.max_tokens); print("ceilings", round(time.process_time() - t, 3), "budget", e.max_tokens)
over = [x for x, b in zip(texts, [len(x) - x.count(" ") - x.count("\n") for x in texts]) if b > e.max_tokens]
still = [x for x, b in zip(texts, ceil) if b > e.max_tokens]
print("over by chars", len(over), "over refined", len(still))
t = time.process_time(); n1 = c.count(still); print("count still (cold)", round(time.process_time() - t, 3))
t = time.process_time(); tk = e._get_tokenizer(); print("rust tokenizer build", round(time.process_time() - t, 3))
for par in ("true",):
    t = time.process_time(); w = time.perf_counter(); enc = tk.encode_batch(over, add_special_tokens=False); print("rust encode_batch over", len(over), round(time.process_time() - t, 3), "wall", round(time.perf_counter() - w, 3))
    t = time.process_time(); enc = [tk.encode(x, add_special_tokens=False) for x in over[:1000]]; print("rust encode 1000 one by one", round(time.process_time() - t, 3))
print("load", os.getloadavg()[0])
