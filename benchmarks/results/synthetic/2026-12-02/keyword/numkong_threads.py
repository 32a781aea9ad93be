"""Does numkong's packed int8 product release the GIL, and does splitting it over two
threads pay on this machine? Random 1M x 96 int8 codes and one query code (seed 0).

Prints the p50 of 30 scans of the whole packed matrix and of its two packed halves on
two threads (three alternating blocks; the results are checked equal), then how many
iterations a pure-Python loop on another thread made during 20 scans against during a
sleep of the same length (near 0 would mean the scan holds the GIL). Usage::

    nice -n 5 python numkong_threads.py
"""

from __future__ import annotations

import os
import statistics
import threading
import time

import numkong
import numpy as np

ROWS, DIMS = 1_000_000, 96


def main() -> None:
    """Print the timings and the GIL check."""
    rng = np.random.default_rng(0)
    codes = rng.integers(-127, 128, size=(ROWS, DIMS), dtype=np.int8)
    query = rng.integers(-127, 128, size=(1, DIMS), dtype=np.int8)
    whole = numkong.dots_pack(codes)
    halves = [numkong.dots_pack(np.ascontiguousarray(codes[:ROWS // 2])),
              numkong.dots_pack(np.ascontiguousarray(codes[ROWS // 2:]))]

    def one() -> np.ndarray:
        return np.asarray(numkong.dots_packed(query, whole))[0]

    def split() -> np.ndarray:
        out: list = [None, None]

        def work(i: int) -> None:
            out[i] = np.asarray(numkong.dots_packed(query, halves[i]))[0]

        other = threading.Thread(target=work, args=(1,))
        other.start()
        work(0)
        other.join()
        return np.concatenate(out)

    assert (one() == split()).all()
    for name, fn in (("one", one), ("split", split)) * 3:
        times = []
        for _ in range(30):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        print(name, "p50 ms", round(statistics.median(times) * 1e3, 2), "load",
              os.getloadavg()[0])
    stop = threading.Event()
    count = [0]

    def spin() -> None:
        while not stop.is_set():
            count[0] += 1

    spinner = threading.Thread(target=spin)
    spinner.start()
    time.sleep(0.05)
    c0, start = count[0], time.perf_counter()
    for _ in range(20):
        one()
    elapsed, c1 = time.perf_counter() - start, count[0]
    time.sleep(elapsed)
    c2 = count[0]
    stop.set()
    spinner.join()
    print("spin iterations during 20 scans", c1 - c0, "during a sleep as long", c2 - c1)


if __name__ == "__main__":
    main()
