"""How ``scale-realistic.md`` in this folder was made: the realistic scale curve with only
the rows issue 15's latency targets need, without the peers.

``synthetic.ROWS`` minus grep, rank-bm25 and the on-disk rows (at 1M on this loaded
machine they alone take hours), and no peers (LanceDB's ingest alone is ~15 min at 1M
here). Run from the repository root with the venv's python::

    nice -n 5 python benchmarks/results/synthetic/2026-12-02/run_rows.py 100k,1M OUT \
        fts5,sqlite-vec,sqlite-vec-exact,hybrid,hybrid-exact
"""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console

from octomem.benchmarks import synthetic


def main() -> None:
    """Run the curve at ``argv[1]`` sizes into ``argv[2]`` with the rows named in ``argv[3]``."""
    names = sys.argv[3].split(",")
    rows = tuple(r for r in synthetic.ROWS if r.split("=", 1)[0] in names)
    synthetic._peers = lambda *a, **k: None  # type: ignore[assignment]
    synthetic.run_scale_curve(sys.argv[1], Path(sys.argv[2]), None, {}, Console(stderr=True),
                              corpus="realistic", sources=Path("../shared/data"), rows=rows)


if __name__ == "__main__":
    main()
