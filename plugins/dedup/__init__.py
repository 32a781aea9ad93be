"""Dedup arms: collapse repetitions in an answer, or reorder it for diversity.

- :mod:`.cosine` — ``cosine`` (the default): identical text first, then cosine >= a
  threshold, always keeping the better-ranked copy;
- :mod:`.mmr` — ``mmr``: maximal marginal relevance (Carbonell & Goldstein, SIGIR 1998).
"""

from __future__ import annotations

from octomem.engine.arms import ArmSpec
from octomem.engine.hookspecs import hookimpl

from .cosine import cosine_spec
from .mmr import mmr_spec


@hookimpl
def octomem_register_dedups() -> list[ArmSpec]:
    """Offer the ``cosine`` and ``mmr`` dedups."""
    return [cosine_spec(), mmr_spec()]
