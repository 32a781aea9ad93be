"""Round 9: how far the wall of the 10k ingest would fall if a part of the worker's Python
cost nothing: ``Pipeline.add(embed=False)`` + the vectors (as ``rt_modes.py``, worker and
0.2 ms switch interval, ``SCHED_FIFO`` around the timed part), alternated per round:

- ``as is``;
- ``counted before``: every batch's token counter (``Pipeline._counted``) built before the
  clock and handed out as the batch comes (the counting's cost out of the chain);
- ``rows before``: the storage's ``bulk_rows`` (``bulk_text_rows`` since round 12) of every batch built before the clock.

Run: ``PEERS_OUT=DIR python what_if.py R``.
"""
# ruff: noqa
import os, shutil, statistics, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
import octomem.engine.writes as W
import octomem.engine.pipeline as P

n = 10000
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(H.texts_for(n))]
batches = list(W.transactions(docs, None))
spare = H.vectors_for(2 * n)
R = int(sys.argv[1]) if len(sys.argv) > 1 else 5
modes = ("as is", "counted before", "rows before")
got = {m: [] for m in modes}
for r in range(R):
    for mode in modes:
        root = H.OUT / f"wi{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
        p = Pipeline(load_settings(None, {}), load_registry(), root)
        storage = p.arms.storage
        if mode == "counted before":
            made = {id(b[0]): p._counted(b) for b in batches}
            p._counted = lambda batch, made=made: made[id(batch[0])]
        if mode == "rows before":
            real = storage.bulk_rows
            made = {}
            for b in batches:
                count = p._counted(b)
                made[id(b[0])] = real(list(zip(b, [p._chunk(d, count) for d in b])))
            storage.bulk_rows = lambda pairs, made=made: made[id(pairs[0][0])]
            if hasattr(storage, "bulk_text_rows"):  # since round 12 the worker builds these
                made_t = {id(b[0]): storage.bulk_text_rows(b, [p._chunk_texts(d, count) for d in b])
                          for b in batches for count in [p._counted(b)]}
                storage.bulk_text_rows = lambda documents, texts, made=made_t: made[id(documents[0])]
        P.transactions = lambda documents, size: iter(batches)  # the same list objects
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
        try:
            t, c = time.perf_counter(), time.process_time()
            rep = p.add(docs, embed=False)
            ids = rep.chunk_ids; vecs = spare[:len(ids)]
            for s in range(0, len(ids), 256):
                with storage.transaction() as tx:
                    p.arms.semantic.add(tx, ids[s:s + 256], vecs[s:s + 256])
            w, cpu = time.perf_counter() - t, time.process_time() - c
        finally:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        p.close(); shutil.rmtree(root, ignore_errors=True)
        got[mode].append((w, cpu))
        print(f"round {r + 1} {mode:15} wall {w:.3f} cpu {cpu:.3f} load {os.getloadavg()[0]:.1f}", flush=True)
for m in modes:
    print(f"median {m:15} wall {statistics.median(x[0] for x in got[m]):.3f} "
          f"cpu {statistics.median(x[1] for x in got[m]):.3f}")
