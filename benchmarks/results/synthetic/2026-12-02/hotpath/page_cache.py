"""What a store file that has left the page cache costs the hybrid search, and what
reading the chunks table's pages once at warm-up (``SELECT count(*) FROM chunks NOT
INDEXED``, what the ``sqlite`` storage's ``warm()`` runs) gives back. One copy of a curve
store (never the shared one): its SQLite file is dropped from the page cache
(``posix_fadvise(DONTNEED)`` on that file only; the snapshots beside it stay), the
pipeline opened and warmed (arms only: ``kinds=("semantic", "keyword")``), then with or
without the page-in, N SciFact test claims timed (caches emptied per query as in
``ab.py``). Rounds alternate. The search runs serially (``retrieval.parallel_arms`` off) so that the
calling thread does all of it, and its time blocked (wall minus the time it ran or
waited to run, from ``/proc/thread-self/schedstat``: the disk reads, unlike wall time,
do not depend on how loaded the cores are) is reported beside the p50. Usage::

    nice -n 5 python page_cache.py STORE_COPY N ROUNDS
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import ab  # noqa: E402

from octomem.engine.types import Query  # noqa: E402


def drop(path: Path) -> None:
    """Drop ``path``'s clean pages from the page cache."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def resident(path: Path) -> str:
    """Return fincore's resident size of ``path``."""
    return os.popen(f"fincore -n -o RES {path}").read().strip()


def sched() -> tuple[float, float]:
    """Return the calling thread's (ns run on a CPU, ns waited on a run queue)."""
    run, wait, _ = Path("/proc/thread-self/schedstat").read_text().split()
    return float(run), float(wait)


def one(root: Path, texts: list[str], page_in: bool) -> dict[str, float]:
    db = root / "octomem.sqlite3"
    drop(db)
    before = resident(db)
    registry = ab.load_registry(extra_plugins=[ab.baseline, ab.synthetic_data])
    combo = ab.parse_combo(ab.ROW, registry, ab.load_settings(None, {}).settings)
    overrides = combo.settings_overrides()
    overrides.setdefault("retrieval", {})["parallel_arms"] = False
    pipe = ab.Pipeline(ab.load_settings(None, overrides), registry, root)
    pipe.warm(("semantic", "keyword"))
    start = time.perf_counter()
    if page_in:
        pipe.arms.storage.connection().execute(
            "SELECT count(*) FROM chunks NOT INDEXED").fetchall()
    page_in_s = time.perf_counter() - start
    pipe.search(Query("warm up the embedder", top_k=10))
    wall, blocked = [], []
    for text in texts:
        ab.cold(pipe)
        run, wait = sched()
        t = time.perf_counter()
        pipe.search(Query(text, top_k=10))
        ms = (time.perf_counter() - t) * 1e3
        run2, wait2 = sched()
        wall.append(ms)
        blocked.append(ms - (run2 - run + wait2 - wait) / 1e6)
    pipe.close()
    return {"p50": statistics.median(wall), "blocked": statistics.median(blocked),
            "blocked_mean": statistics.mean(blocked),
            "page_in_s": page_in_s, "resident_before": before, "resident_after": resident(db)}


def main() -> None:
    root, n, rounds = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    texts = ab.claims(n)
    for r in range(rounds):
        for page_in in ((False, True) if r % 2 == 0 else (True, False)):
            load = os.getloadavg()[0]
            got = one(root, texts, page_in)
            print(f"round {r} page-in {page_in!s:5}: p50 {got['p50']:6.2f} ms, blocked p50 "
                  f"{got['blocked']:5.2f} ms (mean {got['blocked_mean']:5.2f}), page-in "
                  f"{got['page_in_s']:.2f} s, file resident "
                  f"{got['resident_before']} -> {got['resident_after']}, load {load:.1f}",
                  flush=True)


if __name__ == "__main__":
    main()
