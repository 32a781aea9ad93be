"""Round 13: ``Pipeline.add(embed=False)`` + the vectors of the 10k ingest (as ``harness.py
ingest``), alternated in one process, a fresh store each, against three ways of starting or
sharing the work differently:

- ``both``: the first two batches prepared at once, the first on the caller's thread and
  the second on the worker (the counter loaded and its tables built first);
- ``ceilings ahead``: each batch's token ceilings made in a third thread as soon as the
  batch exists (the worker then finds them made);
- ``gc off``: Python's garbage collector off while the batches are prepared and written.

Run: ``PEERS_OUT=DIR python start_variants.py R`` (under ``chrt -f 10``).
"""
# ruff: noqa
import gc, os, shutil, statistics, sys, time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
from octomem.engine.switching import quick_switches
import octomem.engine.writes as W, octomem.engine.pipeline as P

n = 10000
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(H.texts_for(n))]
spare = H.vectors_for(2 * n)
PREPARED, TRANSACTIONS = W.prepared, W.transactions


def both(pipeline, batches):
    batches = iter(batches)
    batch, nxt = next(batches, None), None
    if batch is None:
        return
    nxt = next(batches, None)
    if nxt is None:
        yield W.prepare(pipeline, batch)
        return
    pipeline._token_counter(); pipeline._counted([])
    with quick_switches(), ThreadPoolExecutor(1, thread_name_prefix="octomem-prepare") as pool:
        ahead = pool.submit(W.prepare, pipeline, nxt)
        current = W.prepare(pipeline, batch)
        while True:
            yield current
            nxt = next(batches, None)
            current = ahead.result()
            if nxt is None:
                break
            ahead = pool.submit(W.prepare, pipeline, nxt)
    yield current


def gc_off(pipeline, batches):
    gc.disable()
    try:
        yield from PREPARED(pipeline, batches)
    finally:
        gc.enable()


def ceilings_ahead(p, pool):
    made, ceil = {}, p.arms.embedder.token_ceilings
    key = lambda texts: (len(texts), texts[0], texts[-1])
    def token_ceilings(texts):
        f = made.pop(key(texts), None)
        return f.result() if f is not None else ceil(texts)
    p.arms.embedder.token_ceilings = token_ceilings
    def transactions(documents, size):
        waiting = []
        for b in TRANSACTIONS(documents, size):
            texts = [d.text for d in b]
            made[key(texts)] = pool.submit(ceil, texts)
            waiting.append(b)
            if len(waiting) > 1:
                yield waiting.pop(0)
        yield from waiting
    return transactions


def run(mode):
    root = H.OUT / f"sv{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
    p = Pipeline(load_settings(None, {}), load_registry(), root)
    P.prepared = {"both": both, "gc off": gc_off}.get(mode, PREPARED)
    P.transactions, pool = TRANSACTIONS, None
    if mode == "ceilings ahead":
        pool = ThreadPoolExecutor(1)
        P.transactions = ceilings_ahead(p, pool)
    t, c = time.perf_counter(), time.process_time()
    rep = p.add(docs, embed=False)
    st, ids = p.arms.storage, rep.chunk_ids
    for s in range(0, len(ids), 256):
        with st.transaction() as tx:
            p.arms.semantic.add(tx, ids[s:s + 256], spare[s:s + 256][:len(ids[s:s + 256])])
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    if pool:
        pool.shutdown()
    p.close(); shutil.rmtree(root, ignore_errors=True)
    return wall, cpu


modes = ("as is", "both", "ceilings ahead", "gc off")
got = {m: [] for m in modes}
for r in range(int(sys.argv[1]) if len(sys.argv) > 1 else 7):
    for m in modes:
        got[m].append(run(m))
for m in modes:
    ratios = [a[0] / b[0] for a, b in zip(got[m], got["as is"])]
    print(f"{m:15s} median wall {statistics.median(x[0] for x in got[m]):.3f} cpu "
          f"{statistics.median(x[1] for x in got[m]):.3f}; per round / as is "
          f"{statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})")
print(f"load {os.getloadavg()[0]:.1f}")
