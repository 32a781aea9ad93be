"""Round 7: the texts over budget by characters (4,526 of the 10k) bounded word by word in
Python (``WordPieceCounter._word_ceiling``), counted exactly in Python (warm caches), and
counted by the Rust tokenizer (``encode_batch_fast`` and ``encode_batch``, no padding or
truncation); process CPU and wall, medians of 5. Run with and without
``TOKENIZERS_PARALLELISM=false``.

Run: ``python benchmarks/results/ingest/2026-12-03-round7/tokenizer_costs.py``.
"""
# ruff: noqa
import os, sys, time, statistics
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2] / "peers"))
import harness as H
from octomem.plugins.fastembed.embedder import FastembedEmbedder
import tokenizers
e = FastembedEmbedder()
texts = H.texts_for(10000)
c = e._get_counter()
base = c.ceilings(texts, None)
over = [t for t, b in zip(texts, base) if b > e.max_tokens]
tok = c._tokenizer or (c._load() if c._load else None)
if tok is None:
    from tokenizers import Tokenizer
    tok = e._load_tokenizer() if hasattr(e, "_load_tokenizer") else None
tok = tokenizers.Tokenizer.from_str(tok.to_str()); tok.no_padding(); tok.no_truncation()
def m(f, R=5):
    out = []
    for _ in range(R):
        t, p = time.perf_counter(), time.process_time(); f(); out.append((time.process_time() - p, time.perf_counter() - t))
    return f"cpu {statistics.median(x[0] for x in out):.4f} wall {statistics.median(x[1] for x in out):.4f}"
print("par", os.environ.get("TOKENIZERS_PARALLELISM"), "load", os.getloadavg()[0])
print("python refine (word ceilings)", m(lambda: [c._word_ceiling(t) for t in over]))
print("rust encode_batch_fast", m(lambda: [len(x) for x in tok.encode_batch_fast(over, add_special_tokens=False)]))
print("rust encode_batch", m(lambda: [len(x) for x in tok.encode_batch(over, add_special_tokens=False)]))
print("python exact count", m(lambda: c.count(over)))
