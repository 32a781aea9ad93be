"""Why the curve's ``hybrid-exact`` row ran faster than ``hybrid`` at 10k (6.7 against
7.8-8.5 ms, quiet-0900/): it runs second, on the same queries. Rows of the curve run one
after the other in one process, each on a fresh pipeline, over the same claims, so the
second row finds process-wide caches (relevance's content words, dedup's normalised
texts) and the page cache of the store file filled by the first row for exactly its
hits. This runs the curve's two rows as the curve does (``hybrid`` then
``hybrid-exact``), then both again with those caches emptied before each query; below
50k vectors the two rows take the same path (the exact scan). Reports wall and calling
thread's CPU p50 per pass. Usage::

    nice -n 5 python row_order.py STORE N
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import ab  # noqa: E402

from octomem.engine import relevance  # noqa: E402
from octomem.engine.types import Query  # noqa: E402
from octomem.plugins.dedup import cosine  # noqa: E402

ROWS = {"hybrid": ab.ROW,
        "hybrid-exact": ab.ROW + "+arms.sqlite-vec.approximate_above=1000000000"}


def row(root: Path, name: str, texts: list[str], empty: bool) -> tuple[float, float]:
    """Run one row on a fresh pipeline; ``empty``: empty the process caches per query."""
    registry = ab.load_registry(extra_plugins=[ab.baseline, ab.synthetic_data])
    combo = ab.parse_combo(ROWS[name], registry, ab.load_settings(None, {}).settings)
    pipe = ab.Pipeline(ab.load_settings(None, combo.settings_overrides()), registry, root)
    pipe.warm()
    pipe.search(Query(texts[0], top_k=10))  # the runner's untimed warm-up query
    wall, cpu = [], []
    for text in texts:
        if empty:
            relevance.content_words.cache_clear()
            cosine.normalise_text.cache_clear()
        t, c = time.perf_counter(), time.thread_time()
        pipe.search(Query(text, top_k=10))
        wall.append((time.perf_counter() - t) * 1e3)
        cpu.append((time.thread_time() - c) * 1e3)
    pipe.close()
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    root, n = Path(sys.argv[1]), int(sys.argv[2])
    texts = ab.claims(n)
    for empty in (False, True):
        for name in ROWS:
            load = os.getloadavg()[0]
            wall, cpu = row(root, name, texts, empty)
            print(f"{name:12} caches {'emptied per query' if empty else 'as the curve':18}: "
                  f"wall p50 {wall:6.2f} ms, calling thread CPU p50 {cpu:6.2f} ms, "
                  f"load {load:.1f}", flush=True)


if __name__ == "__main__":
    main()
