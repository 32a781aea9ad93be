"""A small shared thread pool so the keyword arm runs while the query is embedded and scanned.

A hybrid search has two independent halves: the keyword arm (SQLite FTS5: C code that
releases the GIL) and query embedding followed by the vector scan (onnxruntime and BLAS:
also outside the GIL). Running the keyword half on a worker thread overlaps them on a
multi-core machine; the answer is the same either way (setting
``retrieval.parallel_arms``). Arms already have to be thread-safe: the MCP server calls
them from worker threads, and the ``sqlite`` storage keeps one connection per thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

#: Worker threads: one keyword search per scope can run at once (local and global).
WORKERS = 2

_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="octomem-arm")
        return _pool


def _timed(fn: Callable[..., T], *args: Any) -> tuple[T, float]:
    start = time.perf_counter()
    result = fn(*args)
    return result, (time.perf_counter() - start) * 1e3


def start_timed(fn: Callable[..., T], *args: Any) -> Future[tuple[T, float]]:
    """Run ``fn(*args)`` on the shared pool.

    :returns: a future of ``(result, milliseconds fn took)``; ``.result()`` re-raises
        whatever ``fn`` raised.
    """
    return _executor().submit(_timed, fn, *args)


def run_timed(fn: Callable[..., T], *args: Any) -> Future[tuple[T, float]]:
    """Run ``fn(*args)`` now, on this thread; the same future as :func:`start_timed`."""
    done: Future[tuple[T, float]] = Future()
    try:
        done.set_result(_timed(fn, *args))
    except Exception as exc:  # re-raised by .result(), exactly where start_timed's would be
        done.set_exception(exc)
    return done
