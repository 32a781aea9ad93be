"""What reading a search's chunks costs when the store file is, and is not, in the page
cache: ``get_chunks`` of 30 random chunk ids (a hybrid search loads 30), 50 times, on a
pipeline never warmed (its storage reads every chunk from the file: no chunk cache, and
no need to load the arms' copies); then the same 50 id sets again (their pages now
read). Wall and CPU p50 of each round. The store's file is read where it is (run it
on a store whose file has partly left the page cache: ``fincore FILE``). Usage::

    nice -n 5 python chunk_reads.py STORE SEED
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import ab  # noqa: E402


def main() -> None:
    root, seed = Path(sys.argv[1]), int(sys.argv[2])
    registry = ab.load_registry(extra_plugins=[ab.baseline, ab.synthetic_data])
    combo = ab.parse_combo(ab.ROW, registry, ab.load_settings(None, {}).settings)
    pipe = ab.Pipeline(ab.load_settings(None, combo.settings_overrides()), registry, root)
    storage = pipe.arms.storage
    ids = [row[0] for row in storage.connection().execute("SELECT id FROM chunks")]
    picks = [random.Random(seed + i).sample(ids, 30) for i in range(50)]
    for name in ("first read", "read again"):
        wall, cpu = [], []
        for pick in picks:
            w, c = time.perf_counter(), time.thread_time()
            storage.get_chunks(pick)
            wall.append((time.perf_counter() - w) * 1e3)
            cpu.append((time.thread_time() - c) * 1e3)
        print(f"{name}: 30 random chunks, wall p50 {statistics.median(wall):.2f} ms "
              f"(mean {statistics.mean(wall):.2f}), CPU p50 {statistics.median(cpu):.2f} ms")


if __name__ == "__main__":
    main()
