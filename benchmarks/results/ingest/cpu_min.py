"""CPU of the 10k ingest excluding embedding, least of R runs in one process (round 8).

Each run: a fresh ``Pipeline`` (new registry, so a new embedder and token counter with cold
caches) over a fresh store, ``add(embed=False)`` of ``harness.py``'s 10,000 documents, then
the vectors as ``harness.py ingest`` writes them; process CPU (every thread) of each part.
On a shared machine the least of several runs is the one least disturbed by the others:
use it to compare two checkouts (``PYTHONPATH=DIR``), alternated, not as an absolute time.

``PEERS_OUT=DIR python benchmarks/results/ingest/cpu_min.py R``
"""
# ruff: noqa
import os, shutil, statistics, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "peers"))
import harness as H
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
import octomem.engine.pipeline as P

runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
n = 10000
texts = H.texts_for(n)
spare = H.vectors_for(2 * n)
rows_cpu, vec_cpu, total = [], [], []
for r in range(runs):
    docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(texts)]
    root = H.OUT / f"cpumin{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
    p = Pipeline(load_settings(None, {}), load_registry(), root)
    c0 = time.process_time()
    rep = p.add(docs, embed=False)
    c1 = time.process_time()
    sem, st = p.arms.semantic, p.arms.storage
    ids = rep.chunk_ids; vecs = spare[:len(ids)]
    for s in range(0, len(ids), 256):
        with st.transaction() as tx:
            sem.add(tx, ids[s:s + 256], vecs[s:s + 256])
    c2 = time.process_time()
    rows_cpu.append(c1 - c0); vec_cpu.append(c2 - c1); total.append(c2 - c0)
    p.close(); shutil.rmtree(root, ignore_errors=True)
print(f"{Path(P.__file__).parents[1]}: least of {runs}: total {min(total):.3f} s CPU "
      f"(rows+fts {min(rows_cpu):.3f}, vectors {min(vec_cpu):.3f}); median total "
      f"{statistics.median(total):.3f}; load {os.getloadavg()[0]:.1f}")
