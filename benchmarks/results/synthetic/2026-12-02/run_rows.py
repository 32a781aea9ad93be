"""How ``scale-realistic.md`` in this folder was made: the realistic scale curve with only
the rows issue 15's latency targets need, without the peers.

``synthetic.ROWS`` minus grep, rank-bm25 and the on-disk rows (at 1M on this loaded
machine they alone take hours), and no peers (LanceDB's ingest alone is ~15 min at 1M
here). Run from the repository root with the venv's python::

    nice -n 5 python benchmarks/results/synthetic/2026-12-02/run_rows.py 100k,1M OUT \
        fts5,sqlite-vec,sqlite-vec-exact,hybrid,hybrid-exact

An item of ``argv[3]`` holding ``=`` is a whole row (``NAME=arm+arm+setting=value``,
:mod:`octomem.benchmarks.combos`), run where it stands among the named ones, e.g.
``hybrid,hybrid-float32=fts5+sqlite-vec+rrf+cosine+arms.sqlite-vec.approximate_scan=float32``.
The cache folder is the default one (``$XDG_CACHE_HOME/octomem/bench``); ``argv[4]``, when
given, is the folder holding ``scifact/`` and ``locomo/`` (default ``../shared/data``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console

from octomem.benchmarks import synthetic


def main() -> None:
    """Run the curve at ``argv[1]`` sizes into ``argv[2]`` with the rows named in ``argv[3]``."""
    known = {r.split("=", 1)[0]: r for r in synthetic.ROWS}
    rows = tuple(item if "=" in item else known[item] for item in sys.argv[3].split(","))
    sources = Path(sys.argv[4] if len(sys.argv) > 4 else "../shared/data")
    synthetic._peers = lambda *a, **k: None  # type: ignore[assignment]
    synthetic.run_scale_curve(sys.argv[1], Path(sys.argv[2]), None, {}, Console(stderr=True),
                              corpus="realistic", sources=sources, rows=rows)


if __name__ == "__main__":
    main()
