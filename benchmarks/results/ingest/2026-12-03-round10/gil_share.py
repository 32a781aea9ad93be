"""Round 10: the 10k ingest's writes alone (every batch prepared before the clock, then
``write_batch`` per transaction as ``Pipeline.add`` calls it), alternated with and without a
thread spinning a Python loop beside them (as the worker's Python runs beside the writes),
``SCHED_FIFO`` around the timed part, the given switch interval: how much of the writes
needs the GIL. Medians of R rounds; wall and the writing thread's CPU.

Run: ``PEERS_OUT=DIR python gil_share.py R [SWITCH_INTERVAL_S]``
"""
# ruff: noqa
import os, shutil, statistics, sys, time, threading
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline, AddReport
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
import octomem.engine.writes as W
n = 10000
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(H.texts_for(n))]
batches = list(W.transactions(docs, None))
R = int(sys.argv[1]); interval = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0002
got = {"alone": [], "spinner": []}
for r in range(R):
    for mode in got:
        root = H.OUT / f"gs{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
        p = Pipeline(load_settings(None, {}), load_registry(), root)
        st = p.arms.storage
        ready = [W.prepare(p, b) for b in batches]
        stop = False
        def spin():
            x = 0
            while not stop:
                for i in range(1000): x += i
        sys.setswitchinterval(interval)
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
        th = threading.Thread(target=spin) if mode == "spinner" else None
        if th: th.start()
        try:
            t, c = time.perf_counter(), time.thread_time()
            rep = AddReport()
            for x in ready:
                with st.transaction() as tx:
                    W.write_batch(p, tx, x.batch, rep, x.count, x.chunks, x.rows, *([x.texts] if hasattr(x, "texts") else []))  # texts: since round 12
            w, cpu = time.perf_counter() - t, time.thread_time() - c
        finally:
            stop = True
            if th: th.join()
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
            sys.setswitchinterval(0.005)
        p.close(); shutil.rmtree(root, ignore_errors=True)
        got[mode].append((w, cpu))
for m, v in got.items():
    print(f"{m:8} writes wall {statistics.median(x[0] for x in v):.3f} thread cpu {statistics.median(x[1] for x in v):.3f} (interval {interval * 1e3:g} ms, load {os.getloadavg()[0]:.1f})")
