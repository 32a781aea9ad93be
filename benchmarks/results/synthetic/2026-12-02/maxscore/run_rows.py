"""How ``scale-realistic.md`` in this folder was made: the realistic scale curve at 100k
and 1M with the rows of issue 15's 1M target, each beside the code before it in the
same process (the "before" rows turn the two changes off by setting).

- ``fts5`` (MaxScore pruning of the in-RAM postings) vs ``fts5-before``
  (``arms.fts5.pruning=false``: the exhaustive sum, the same hits and scores);
- ``sqlite-vec`` (96-dimension projection, 1,000 candidates re-scored exactly: unchanged)
  and ``sqlite-vec-exact``;
- ``hybrid`` vs ``hybrid-before`` (pruning off), ``hybrid-serial`` (the two arms one
  after the other, ``retrieval.parallel_arms=false``) and ``hybrid-exact`` (exact vector
  scan, pruned keyword arm: the ratio reference).

No peers, no on-disk rows (see ``../run_rows.py``). Run from the repository root with
the venv's python::

    nice -n 5 python benchmarks/results/synthetic/2026-12-02/maxscore/run_rows.py 100k,1M OUT
"""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console

from octomem.benchmarks import synthetic

EXACT_VEC = "arms.sqlite-vec.approximate_above=1000000000"
HYBRID = "fts5+sqlite-vec+rrf+cosine"
ROWS = (
    "fts5=fts5",
    "fts5-before=fts5+arms.fts5.pruning=false",
    "sqlite-vec=sqlite-vec",
    f"sqlite-vec-exact=sqlite-vec+{EXACT_VEC}",
    f"hybrid={HYBRID}",
    f"hybrid-before={HYBRID}+arms.fts5.pruning=false",
    f"hybrid-serial={HYBRID}+retrieval.parallel_arms=false",
    f"hybrid-exact={HYBRID}+{EXACT_VEC}",
)


def main() -> None:
    """Run the curve at ``argv[1]`` sizes into ``argv[2]`` with :data:`ROWS`."""
    synthetic._peers = lambda *a, **k: None  # type: ignore[assignment]
    synthetic.run_scale_curve(sys.argv[1], Path(sys.argv[2]), None, {}, Console(stderr=True),
                              corpus="realistic", sources=Path("../shared/data"), rows=ROWS)


if __name__ == "__main__":
    main()
