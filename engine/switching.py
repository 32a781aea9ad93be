"""Quick hand-overs of the GIL while a worker thread's Python runs beside SQL statements.

During an ingest (:func:`octomem.engine.writes.prepared`) the caller's thread writes a
batch by a few SQL statements, each run by SQLite without the GIL, while a worker thread
counts, chunks and builds the rows of the next batch in Python, holding it. Each time a
statement returns, the caller needs the GIL back; CPython makes a waiting thread wait
the *switch interval* (``sys.getswitchinterval()``, 5 ms by default) before it asks the
running thread to let go. With ~20 statements a batch that was up to ~100 ms of a
~60 ms batch spent waiting, and the two threads took turns instead of overlapping (round
9: ``benchmarks/results/ingest/2026-12-03-round9``). :func:`quick_switches` lowers the
interval to :data:`INGEST_SWITCH_INTERVAL` while at least one such section runs in the
process and puts the previous value back when the last one ends. It changes only how
soon a waiting thread gets the GIL, never what any thread computes.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

#: Seconds a thread waits for the GIL before the running thread is asked to release it,
#: during an ingest's overlapped batches (CPython's default: 0.005).
INGEST_SWITCH_INTERVAL = 0.0002

_lock = threading.Lock()
_depth = 0  # blocks running
_saved = 0.0  # the interval before the first of them
_ours = 0.0  # the interval they set last


@contextmanager
def quick_switches(interval: float = INGEST_SWITCH_INTERVAL) -> Iterator[None]:
    """Run the block with the process's switch interval at most ``interval`` seconds.

    Nested and concurrent blocks (two ingests in one process) share one change: the first
    to enter saves the interval, the last to leave restores it (unless something else
    set another value meanwhile, which is then left alone).
    """
    global _depth, _saved, _ours
    with _lock:
        if _depth == 0:
            _saved = _ours = sys.getswitchinterval()
        _depth += 1
        if sys.getswitchinterval() > interval:
            sys.setswitchinterval(interval)
            _ours = sys.getswitchinterval()
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and sys.getswitchinterval() == _ours:
                sys.setswitchinterval(_saved)
