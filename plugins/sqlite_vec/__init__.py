"""Semantic arm ``sqlite-vec``: exact cosine search over vectors stored in vec0 tables.

- :mod:`.arm` — :class:`~.arm.SqliteVecSemanticArm` (one vec0 table per embedder
  identity; add, remove, search with filters inside) and its registration;
- :mod:`.options` — its options (``[arms.sqlite-vec]``);
- :mod:`.in_ram` — the arm's in-RAM copies of its vector sets and when searches use them;
- :mod:`.matrix` — the in-RAM float32 copy scanned with numpy in long-running
  processes (and the projection prefilter from 50k vectors);
- :mod:`.matrix_snapshot` — that copy's snapshot beside the file;
- :mod:`.row_gather` — scoring only the rows a selective filter keeps;
- :mod:`.blas_threads` — BLAS on one thread around every scan (bandwidth-bound);
- :mod:`.vec0_reader` — bulk reads of vec0's shadow tables to load that copy;
- :mod:`.vec0_writer` — new vectors written into vec0's shadow tables a block at a time.
"""

from __future__ import annotations

from .arm import octomem_register_semantic_arms

__all__ = ["octomem_register_semantic_arms"]
