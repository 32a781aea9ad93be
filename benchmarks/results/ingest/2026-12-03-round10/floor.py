"""Round 10: the SQL floor of the 10k ingest, modes alternated in one process, stores in
``PEERS_OUT``, ``SCHED_FIFO`` around the timed part only (needs root):

- ``as is``: ``Pipeline.add(embed=False)``, then the vectors as ``harness.py ingest`` writes
  them (transactions of 256);
- ``sql only``: every batch prepared (counted, chunked, its rows built) before the clock,
  then the same writes in one thread, then the vectors: what is left when no Python of the
  worker is on the chain;
- ``... ckpt``: the connection's ``wal_autocheckpoint`` 100,000 pages (no checkpoint until
  the end); ``... ckpt restore``: put back to 1,000 before the vectors (their first commit
  then checkpoints the whole log).

Printed: to the last vector's commit, then with a final ``PRAGMA wal_checkpoint(PASSIVE)``
(inside the clock for every mode), rows + FTS5, process CPU.

Run: ``PEERS_OUT=DIR python floor.py R ["as is" "sql only" "sql only ckpt" ...]``
"""
# ruff: noqa
import os, shutil, statistics, sys, time
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
spare = H.vectors_for(2 * n)
R = int(sys.argv[1]) if len(sys.argv) > 1 else 5
modes = tuple(sys.argv[2:]) or ("as is", "sql only")
got = {m: [] for m in modes}
for r in range(R):
    for mode in modes:
        root = H.OUT / f"fl{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
        p = Pipeline(load_settings(None, {}), load_registry(), root)
        st = p.arms.storage
        ready = [W.prepare(p, b) for b in batches] if mode.startswith("sql only") else None
        if mode.endswith("ckpt"):
            st.connection().execute("PRAGMA wal_autocheckpoint=100000")
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
        try:
            t, c = time.perf_counter(), time.process_time()
            if ready is None:
                rep = p.add(docs, embed=False)
            else:
                rep = AddReport()
                for x in ready:
                    with st.transaction() as tx:
                        W.write_batch(p, tx, x.batch, rep, x.count, x.chunks, x.rows, *([x.texts] if hasattr(x, "texts") else []))  # texts: since round 12
            rows = time.perf_counter() - t
            if "restore" in mode:
                st.connection().execute("PRAGMA wal_autocheckpoint=1000")
            ids = rep.chunk_ids; vecs = spare[:len(ids)]
            for s in range(0, len(ids), 256):
                with st.transaction() as tx:
                    p.arms.semantic.add(tx, ids[s:s + 256], vecs[s:s + 256])
            vec_end = time.perf_counter() - t
            st.connection().execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            w, cpu = time.perf_counter() - t, time.process_time() - c
        finally:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        p.close(); shutil.rmtree(root, ignore_errors=True)
        got[mode].append((w, cpu, rows, vec_end))
        print(f"round {r + 1} {mode:9} to the vectors' end {vec_end:.3f} (rows+fts {rows:.3f}), with a final checkpoint {w:.3f}, cpu {cpu:.3f} load {os.getloadavg()[0]:.1f}", flush=True)
for m in modes:
    print(f"median {m:9} to the vectors' end {statistics.median(x[3] for x in got[m]):.3f}, with a final checkpoint {statistics.median(x[0] for x in got[m]):.3f}, rows+fts {statistics.median(x[2] for x in got[m]):.3f} "
          f"cpu {statistics.median(x[1] for x in got[m]):.3f}")
