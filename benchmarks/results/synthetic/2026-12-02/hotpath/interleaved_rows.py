"""The curve's ``hybrid`` and ``hybrid-exact`` rows interleaved per query in one process
(two pipelines open on the same store, the order rotating per query), each query's
caches emptied before each row's search as in ``ab.py``: the two rows' p50s once row
order no longer favours one (``row_order.py`` runs them one after the other, as the
curve does). Reports wall, process CPU and the calling thread's CPU p50. Usage::

    nice -n 5 python interleaved_rows.py STORE N
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import ab  # noqa: E402
from row_order import ROWS  # noqa: E402

from octomem.engine.types import Query  # noqa: E402


def main() -> None:
    root, n = Path(sys.argv[1]), int(sys.argv[2])
    texts = ab.claims(n)
    registry = ab.load_registry(extra_plugins=[ab.baseline, ab.synthetic_data])
    pipes = {}
    for name, row in ROWS.items():
        combo = ab.parse_combo(row, registry, ab.load_settings(None, {}).settings)
        pipe = ab.Pipeline(ab.load_settings(None, combo.settings_overrides()), registry, root)
        pipe.warm()
        pipe.search(Query(texts[0], top_k=10))
        pipes[name] = pipe
    names = list(ROWS)
    times: dict[str, list[tuple[float, float, float]]] = {name: [] for name in names}
    load = os.getloadavg()
    for i, text in enumerate(texts):
        for name in names[i % 2:] + names[:i % 2]:
            ab.cold(pipes[name])
            w, c, m = time.perf_counter(), time.process_time(), time.thread_time()
            pipes[name].search(Query(text, top_k=10))
            times[name].append(((time.perf_counter() - w) * 1e3,
                                (time.process_time() - c) * 1e3,
                                (time.thread_time() - m) * 1e3))
    print(f"{root}: {len(texts)} queries, load {[round(x, 2) for x in load]} -> "
          f"{[round(x, 2) for x in os.getloadavg()]}")
    for name in names:
        wall, cpu, main_cpu = (statistics.median(t[j] for t in times[name]) for j in range(3))
        print(f"  {name:12} wall p50 {wall:6.2f} ms, CPU p50 {cpu:6.2f} ms, calling thread "
              f"CPU p50 {main_cpu:6.2f} ms")


if __name__ == "__main__":
    main()
