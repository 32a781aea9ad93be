"""SciFact train (tune data; trial 17 G13): each claim's keyword run at candidate_k, asked of
the whole store (own) and with the claim's evidence hidden (masked): its k-th / best score
ratio, whether its k-th entry holds every query word the best entry holds, and whether it
holds every content word of the claim (coverage 1). Output: spread.txt.

usage: python spread.py /work/scratch/cache/scifact-ae39e2b33141/fastembed-e322b42ed759
(a bench cache entry; copied to a temporary folder first, removed at the end).
"""

import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

from octomem.benchmarks.dataset import load_dataset
from octomem.benchmarks.masked import chunks_by_document, hidden_chunks
from octomem.engine.chunking import embedding_text
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.relevance import content_words, coverage
from octomem.engine.settings import load_settings
from octomem.engine.types import Filters

tmp = Path(tempfile.mkdtemp()) / "e"
shutil.copytree(Path(sys.argv[1]), tmp)  # a copy: the shared cache stays as it is
ds = load_dataset(Path("/work/shared/data/scifact"), "train")
p = Pipeline(load_settings(read_user_config=False), load_registry(), tmp)
p.warm()
k = p.settings.retrieval.candidate_k
chunks = chunks_by_document(p)


def one(text: str) -> tuple[float, float, float] | None:
    """(k-th / best score, best's coverage, k-th's coverage); None: a run shorter than k."""
    run = p.arms.keyword.search(text, Filters(), k)
    if len(run) < k:
        return None
    words = content_words(text)
    top, kth = p.arms.storage.get_chunks([run[0].chunk_id, run[-1].chunk_id])
    return (run[-1].score / run[0].score, coverage(words, embedding_text(top)),
            coverage(words, embedding_text(kth)))


rows = []
for qid, text in ds.queries.items():
    judged = ds.qrels[qid]
    r = one(text)
    hidden = frozenset(c for d, g in judged.items() if g > 0 for c in chunks.get(d, ()))
    with hidden_chunks(p, hidden):
        m = one(text)
    rows.append((r[0] if r else np.nan, m[0] if m else np.nan,
                 (r[2] >= r[1]) if r else np.nan, (m[2] >= m[1]) if m else np.nan,
                 r[2] if r else np.nan, m[2] if m else np.nan))
a = np.array(rows)
for j, name in enumerate(("own", "masked")):
    x = a[:, j][~np.isnan(a[:, j])]
    q99, q90, mid = np.quantile(x, .99), np.quantile(x, .9), np.median(x)
    print(name, len(x), f"kth/top max {x.max():.3f} p99 {q99:.3f} p90 {q90:.3f} median {mid:.3f}")
    print("  top 10 ratios", np.sort(x)[-10:].round(3))
print("max masked claim:", list(ds.queries.values())[int(np.nanargmax(a[:, 1]))])
print("kth holds every word the top holds: own", np.nansum(a[:, 2]), "masked", np.nansum(a[:, 3]))
print("kth coverage 1.0: own", np.nansum(a[:, 4] >= 1), "masked", np.nansum(a[:, 5] >= 1),
      "max kth cov", np.nanmax(a[:, 4]), np.nanmax(a[:, 5]))
p.close()
shutil.rmtree(tmp.parent)
