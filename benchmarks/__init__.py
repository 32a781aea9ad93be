"""The benchmark runner: measure arm combinations on BEIR-layout data, quality and cost.

``octomem bench`` (see :mod:`octomem.benchmarks.command`) is the entry; committed reports
live in ``benchmarks/results/<dataset>/`` and are listed in ``docs/benchmarks.md``.
Two focused measurements run on their own: :mod:`.mcp_startup` (MCP server spawn ->
first answers) and :mod:`.ingest_overhead` (ingest time by part).

The bench's libraries keep their own caches under octomem's bench cache: ranx imports
ir_datasets, which makes ``~/.ir_datasets/`` unless ``IR_DATASETS_HOME`` says elsewhere,
and matplotlib keeps its font list in ``~/.cache`` and ``~/.config`` unless
``MPLCONFIGDIR`` does. Both are read when those libraries are imported, so they are set
here, before any module of the package imports them; a value the user set is kept.
"""

import os
from importlib.util import find_spec
from pathlib import Path

from .cache import default_cache_dir

os.environ.setdefault("IR_DATASETS_HOME", str(default_cache_dir() / "ir_datasets"))
os.environ.setdefault("MPLCONFIGDIR", str(default_cache_dir() / "matplotlib"))


def _ranx_folder_writable() -> bool:
    """Whether numba can write its cache of ranx's compiled code beside ranx's modules
    (``@njit(cache=True)`` writes ``__pycache__/*.nbi``); found without importing ranx."""
    spec = find_spec("ranx")
    if spec is None or spec.origin is None:
        return True  # not installed: nothing to cache
    folder = Path(spec.origin).parent / "metrics"
    cache = folder / "__pycache__"
    return os.access(cache if cache.is_dir() else folder, os.W_OK)


# ranx's first use compiles its code with numba (about a minute of CPU, minutes of wall
# time on a busy machine), cached beside ranx. Where that folder cannot be written (a
# system-wide or read-only install), numba would compile again on every run: its cache
# then goes under octomem's bench cache instead.
if not _ranx_folder_writable():
    os.environ.setdefault("NUMBA_CACHE_DIR", str(default_cache_dir() / "numba"))
