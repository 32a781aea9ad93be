"""Which compiled kernel scans 1M x 96 int8 codes fastest for one query: CPU ms (median of
9, one thread) of numpy's float32 product (row- and column-major: the scan before),
numkong's packed int8 product and its unpacked ``cdist``, faiss's IndexScalarQuantizer
(8-bit, top 1,100 included) and usearch's exact search (top 1,100 included), on random
codes. faiss and usearch are optional (``pip install faiss-cpu usearch``); the rows of
a missing one are skipped. Usage::

    nice -n 5 python kernels.py
"""

from __future__ import annotations

import os
import time

import numpy as np
from threadpoolctl import threadpool_limits

N, DIMS = 1_000_000, 96


def cpu_ms(f, repeat: int = 9) -> float:  # type: ignore[no-untyped-def]
    """Median thread CPU ms of ``f()`` after one untimed call."""
    f()
    times = []
    for _ in range(repeat):
        t = time.thread_time()
        f()
        times.append(time.thread_time() - t)
    return float(np.median(times) * 1e3)


def main() -> None:
    """Print one line per kernel."""
    import numkong

    threadpool_limits(1)
    rng = np.random.default_rng(0)
    xf = rng.standard_normal((N, DIMS), dtype=np.float32)
    qf = rng.standard_normal(DIMS).astype(np.float32)
    codes = np.clip(np.rint(xf * 40), -127, 127).astype(np.int8)
    q8 = np.clip(np.rint(qf * 40), -127, 127).astype(np.int8)[None, :]
    xf_f = np.asfortranarray(xf)
    rows = {"numpy float32, row-major": lambda: xf @ qf,
            "numpy float32, column-major (the scan before)": lambda: xf_f @ qf}
    t = time.perf_counter()
    packed = numkong.dots_pack(codes)
    pack_s = time.perf_counter() - t
    rows["numkong dots_packed int8"] = lambda: numkong.dots_packed(q8, packed)
    rows["numkong cdist int8 (unpacked)"] = lambda: numkong.cdist(
        q8, codes, metric="dot", out_dtype="float32")
    try:
        import faiss

        faiss.omp_set_num_threads(1)
        index = faiss.IndexScalarQuantizer(DIMS, faiss.ScalarQuantizer.QT_8bit_direct_signed,
                                           faiss.METRIC_INNER_PRODUCT)
        index.train(xf[:50_000])
        index.add(xf)
        rows["faiss IndexScalarQuantizer 8-bit, top 1,100"] = lambda: index.search(
            qf[None, :], 1100)
    except ImportError:
        pass
    try:
        from usearch.index import MetricKind, search

        rows["usearch exact int8, top 1,100"] = lambda: search(
            codes, q8, 1100, MetricKind.IP, exact=True, threads=1)
    except ImportError:
        pass
    start = os.getloadavg()
    for name, f in rows.items():
        print(f"{name}: {cpu_ms(f):.2f} ms CPU")
    print(f"numkong dots_pack of {N:,} x {DIMS}: {pack_s:.2f} s; load {start[0]:.1f} -> "
          f"{os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
