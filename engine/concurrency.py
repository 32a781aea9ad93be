"""A small shared thread pool so the keyword arm and the query's embedding overlap.

A hybrid search has two independent halves: the keyword arm (SQLite FTS5, or its in-RAM
postings: C code and numpy with some Python) and query embedding followed by the vector
scan (onnxruntime and BLAS: outside the GIL). Running one half on a worker thread
overlaps them on a multi-core machine; the answer is the same either way (setting
``retrieval.parallel_arms``). A pipeline's search puts the keyword arm on the worker; so
does a recall with the bundled model, once the query is tokenized, and runs the model on
the calling thread meanwhile (another embedder: the embedding on the worker, the keyword
arm here; :mod:`.memory.scoped_search`), so the keyword arm's Python, holding the GIL,
never delays the embedding's start. Arms already have to be
thread-safe: the MCP server calls them from worker threads, and the ``sqlite`` storage
keeps one connection per thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

#: Worker threads: a recall's embedding, or one keyword search per scope (local and
#: global), run at once.
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
