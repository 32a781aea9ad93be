"""BLAS calls on one thread: a vector scan is bound by memory bandwidth, which one core
reaches, and more threads only contend (:class:`one_blas_thread`, entered around every
scan of :mod:`.matrix` and :mod:`.scan`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from threadpoolctl import ThreadpoolController


def _thread_calls(lib: Any) -> tuple[Callable[[], int], Callable[[int], Any]]:
    """Return a BLAS library's (get, set) thread-count calls: OpenBLAS's own C functions
    when it threads with pthreads (~0.3 us a call, against 0.7-1.8 us through
    threadpoolctl's methods, which add checks for Python threads setting limits at once:
    here every change is undone by the thread that made it, so a thread reading another's
    1 changes nothing), else threadpoolctl's methods (OpenMP's limits are per thread)."""
    dynlib = getattr(lib, "dynlib", None)
    if lib.internal_api == "openblas" and lib.threading_layer != "openmp" and dynlib is not None:
        for prefix, suffix in itertools.product(("", "scipy_"), ("", "64_", "_64")):
            get = getattr(dynlib, f"{prefix}openblas_get_num_threads{suffix}", None)
            put = getattr(dynlib, f"{prefix}openblas_set_num_threads{suffix}", None)
            if get is not None and put is not None:
                return get, put
    return lib.get_num_threads, lib.set_num_threads


#: the (get, set) thread-count calls of the BLAS libraries numpy loaded (found once: ~10 ms)
_BLAS = [_thread_calls(lib)
         for lib in ThreadpoolController().select(user_api="blas").lib_controllers]


class one_blas_thread:  # noqa: N801 (a context used as a function, its name kept)
    """A context in which BLAS calls use one thread (~1.5 us: the libraries' own get/set
    calls, :func:`_thread_calls`; ``ThreadpoolController.limit`` took 0.02-0.06 ms, a
    twentieth of a filtered search at 10k, and a generator-based context through
    threadpoolctl's handles ~10 us).

    A scan is a matrix-vector product, bound by memory bandwidth, which one core
    reaches (numpy's single-threaded ``sum`` reads 26 GB/s here). More threads only
    contend: with onnxruntime's spinning threads in the same process (the embedder),
    OpenBLAS's threaded gemv took 3.4 ms at 10k x 384 against 0.58 ms on one thread, and
    5.9 against 6.1 ms at 100k (2 cores); the keyword arm's worker thread needs the other
    core anyway (``retrieval.parallel_arms``).
    """

    __slots__ = ("changed",)

    def __enter__(self) -> None:
        changed = []
        for get, put in _BLAS:
            threads = get()
            if threads != 1:
                put(1)
                changed.append((put, threads))
        self.changed = changed

    def __exit__(self, *exc: object) -> None:
        for put, threads in self.changed:
            put(threads)
