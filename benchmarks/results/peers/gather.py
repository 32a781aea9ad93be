"""The measurement behind ``plugins/sqlite_vec``'s ``GATHER_SHARE`` and ``row_gather.BLOCK_ROWS``.

Scores the rows a random mask keeps (3 %, 10 %, 20 %, 30 % of N random 384-d float32
vectors) two ways, one BLAS thread, interleaved, median of R rounds: the full
column-major product then dropping the other rows (the scan before), and a gather of
the kept rows from a row-major copy in blocks of 256 or 1,024 rows
(``row_gather.gathered_scores``). Run: ``nice -n 5 python benchmarks/results/peers/gather.py N R``.
"""
# ruff: noqa

import os, sys, time
import numpy as np
from threadpoolctl import threadpool_limits
from octomem.plugins.sqlite_vec import row_gather

n, reps = int(sys.argv[1]), int(sys.argv[2])
d = 384
rng = np.random.default_rng(0)
rows_major = rng.standard_normal((n, d)).astype(np.float32)
cols_major = np.asfortranarray(rows_major)
q = rng.standard_normal(d).astype(np.float32)
shares = [0.03, 0.1, 0.2, 0.3]
kept = {s: np.flatnonzero(rng.random(n) < s) for s in shares}


def gather(rows, block):
    row_gather.BLOCK_ROWS = block
    return row_gather.gathered_scores(rows_major, rows, q, np.zeros((block, d), np.float32))


fns = {"full product": lambda: cols_major @ q}
for s in shares:
    fns[f"{s:.0%} full product, drop"] = (lambda r: lambda: (cols_major @ q)[r])(kept[s])
    for block in (256, 1024):
        fns[f"{s:.0%} gather {block}"] = (lambda r, b: lambda: gather(r, b))(kept[s], block)
with threadpool_limits(1, "blas"):
    for fn in fns.values():
        fn()
    times = {name: [] for name in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            t = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - t) * 1e3)
print(f"n={n} rounds={reps} load={os.getloadavg()}")
for name, ts in times.items():
    print(f"{name:28} {np.median(ts):8.3f} ms")
