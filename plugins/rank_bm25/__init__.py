"""Keyword arm ``rank-bm25``: Okapi BM25 from the rank-bm25 package, in memory.

- :mod:`.arm` — :class:`~.arm.RankBm25KeywordArm` and its registration (needs the
  ``bench`` extra: rank-bm25 and PyStemmer).
"""

from __future__ import annotations

from .arm import octomem_register_keyword_arms

__all__ = ["octomem_register_keyword_arms"]
