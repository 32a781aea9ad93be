"""onnxruntime, imported after numpy, on whichever thread loads the model.

A fresh ``octomem search`` loads the model on a worker thread while the calling thread
imports numpy for the arms. The init of onnxruntime's extension imports numpy's C module
by its own name, child before parent, while ``import numpy`` goes parent first: with both
at once, Python's module locks can deadlock and numpy's extension then fails to
initialise twice (``ImportError: cannot load module more than once per process``; seen
once in a fresh search at 100k chunks, issue 15, and in 2 of 16 fresh processes importing
onnxruntime on a thread and numpy on the main thread 3-5 ms later). Importing numpy
first, by name, orders both threads' imports parent first; numpy is needed for the
vectors anyway. It is imported right before onnxruntime, not earlier, so that the rest
of the load (the tokenizer) still overlaps the other thread's import of numpy.
"""

from __future__ import annotations

from types import ModuleType


def import_onnxruntime() -> ModuleType:
    """Return the ``onnxruntime`` module, numpy imported whole first.

    :raises ImportError: numpy or onnxruntime is not installed.
    """
    import numpy  # noqa: F401  (first: see the module docstring)
    import onnxruntime

    return onnxruntime


def import_numpy_first() -> None:
    """Import numpy whole before a library whose extensions import numpy's C module
    directly (fastembed: its import does, through an extension)."""
    import numpy  # noqa: F401
