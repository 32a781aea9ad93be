"""One process's timing of the curve's ``hybrid`` row (``Pipeline.search``, SciFact test
claims, top_k 10, query embedding included, ``retrieval.parallel_arms`` on as the curve
runs it), for :mod:`rounds` to alternate between two checkouts. Prints one JSON line:
p50 of wall, of the calling thread's CPU, of its CPU after the arms (from the return of
``ReadPath._runs``, which both checkouts have, to the answer: fusion, loading, vectors,
dedup, relevance) and of the process's CPU (ms), the load average
before and after, and a digest of every answer (each hit's chunk id, score and
relevance, in order), so two checkouts can be shown to answer the same. Usage::

    python one.py STORE N [PASSES]

Each claim is asked once per pass (the curve asks each once); the first pass is timed
too (``PASSES`` 1, the default, is the curve's situation: every query meets its chunks
for the first time).
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import common  # noqa: E402

from octomem.engine import read_path  # noqa: E402
from octomem.engine.types import Query  # noqa: E402

ARMS_DONE: list[int] = []
_runs = read_path.ReadPath._runs


def timed_runs(self: read_path.ReadPath, *args: object) -> object:
    """``ReadPath._runs``, noting the calling thread's CPU clock when it returns."""
    out = _runs(self, *args)  # type: ignore[arg-type]
    ARMS_DONE.append(time.thread_time_ns())
    return out


def main() -> None:
    """Time ``N`` claims on ``STORE`` and print the JSON line."""
    root, n = Path(sys.argv[1]), int(sys.argv[2])
    passes = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    texts = common.claims(n)
    pipe = common.pipeline(root)
    read_path.ReadPath._runs = timed_runs  # type: ignore[method-assign,assignment]
    digest = hashlib.sha256()
    wall, cpu, proc, post = [], [], [], []
    load = os.getloadavg()[0]
    for _ in range(passes):
        for text in texts:
            c, t, w = time.process_time_ns(), time.thread_time_ns(), time.perf_counter_ns()
            answer = pipe.search(Query(text, top_k=10))
            wall.append((time.perf_counter_ns() - w) / 1e6)
            end = time.thread_time_ns()
            cpu.append((end - t) / 1e6)
            post.append((end - ARMS_DONE[-1]) / 1e6)
            proc.append((time.process_time_ns() - c) / 1e6)
            digest.update(repr([(h.chunk.id, h.score, h.relevance)
                                for h in answer.hits]).encode())
    print(json.dumps({
        "code": str(Path(sys.modules["octomem"].__path__[0]).resolve()),
        "wall_p50": round(statistics.median(wall), 3),
        "thread_cpu_p50": round(statistics.median(cpu), 3),
        "post_arms_cpu_p50": round(statistics.median(post), 3),
        "process_cpu_p50": round(statistics.median(proc), 3),
        "load": [round(load, 2), round(os.getloadavg()[0], 2)],
        "digest": digest.hexdigest()[:16],
    }))


if __name__ == "__main__":
    main()
