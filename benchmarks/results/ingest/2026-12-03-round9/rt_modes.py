"""Round 9: the 10k ingest of ``harness.py ingest octomem`` (``Pipeline.add(embed=False)``,
then the vectors in transactions of 256) in one process, with the cores to itself as on a
quiet machine: the timed part runs under ``SCHED_FIFO`` (``os.sched_setscheduler``, root;
the worker thread inherits it), so the other helpers' jobs wait instead of this one.
Modes, alternated per round, each on a fresh store:

- ``seq``: every batch prepared in the caller's thread (no worker);
- ``thr5``: the worker thread with CPython's default switch interval (5 ms): main before
  this round;
- ``thr02``: the worker thread at 0.2 ms (what ``octomem.engine.switching`` sets; with this
  round's checkout the rows are built in the worker too).

Run: ``PEERS_OUT=DIR [PYTHONPATH=main's archive] python rt_modes.py ROUNDS seq thr5 thr02``
(prints wall and process CPU of the ingest and of the vectors, medians, and per-round
ratios to the first mode).
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
try:
    import octomem.engine.switching as S
except ImportError:  # main before this round
    S = None
threaded = P.prepared


def one_thread(pipeline, batches):
    for batch in batches:
        yield W.prepare(pipeline, batch)


n = 10000
docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(H.texts_for(n))]
spare = H.vectors_for(2 * n)
R, modes = int(sys.argv[1]), sys.argv[2:]
got = {m: [] for m in modes}
for r in range(R):
    for mode in modes:
        P.prepared = one_thread if mode == "seq" else threaded
        interval = 0.0002 if mode == "thr02" else 0.005
        if S is not None:
            S.INGEST_SWITCH_INTERVAL = interval
            # quick_switches' default argument was bound at import: pass it explicitly
            S.quick_switches.__defaults__ = (interval,)
        else:
            sys.setswitchinterval(interval)
        root = H.OUT / f"rt{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
        p = Pipeline(load_settings(None, {}), load_registry(), root)
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
        try:
            t, c = time.perf_counter(), time.process_time()
            rep = p.add(docs, embed=False)
            rows_w, rows_c = time.perf_counter() - t, time.process_time() - c
            sem, st = p.arms.semantic, p.arms.storage
            t, c = time.perf_counter(), time.process_time()
            ids = rep.chunk_ids; vecs = spare[:len(ids)]
            for s in range(0, len(ids), 256):
                with st.transaction() as tx:
                    sem.add(tx, ids[s:s + 256], vecs[s:s + 256])
            vec_w, vec_c = time.perf_counter() - t, time.process_time() - c
        finally:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        sys.setswitchinterval(0.005)
        p.close(); shutil.rmtree(root, ignore_errors=True)
        got[mode].append((rows_w + vec_w, rows_c + vec_c, rows_w, rows_c))
        print(f"round {r + 1} {mode:6} total wall {rows_w + vec_w:.3f} cpu {rows_c + vec_c:.3f} | "
              f"add wall {rows_w:.3f} cpu {rows_c:.3f} | vectors wall {vec_w:.3f} | "
              f"load {os.getloadavg()[0]:.1f}", flush=True)
base = modes[0]
for m in modes:
    x = got[m]
    rw = [a[0] / b[0] for a, b in zip(x, got[base])]
    print(f"median {m:6} total wall {statistics.median(v[0] for v in x):.3f} cpu "
          f"{statistics.median(v[1] for v in x):.3f}, add wall {statistics.median(v[2] for v in x):.3f} "
          f"cpu {statistics.median(v[3] for v in x):.3f}; total wall / {base} per round "
          f"{statistics.median(rw):.2f} ({min(rw):.2f}-{max(rw):.2f})")
