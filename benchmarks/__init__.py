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

from .cache import default_cache_dir

os.environ.setdefault("IR_DATASETS_HOME", str(default_cache_dir() / "ir_datasets"))
os.environ.setdefault("MPLCONFIGDIR", str(default_cache_dir() / "matplotlib"))
