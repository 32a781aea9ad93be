"""Put a re-run of the curve's 1M rows into ``../scale-realistic.{json,md,png}`` (the
2026-12-02 curve of 100k and 1M), in place of the 1M size it had; the 100k size stays.

The run is ``run_rows.py`` at 1M with the 2026-12-02 int8 codes (see README.md here);
the merged report's bandwidth is the better of the two runs' and its header line says
which size was re-run when and at what load. Usage, from the repository root::

    python benchmarks/results/synthetic/2026-12-02/curve-1m/merge.py RUN.json NOTE
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from octomem.benchmarks import synthetic


def main() -> None:
    """Merge ``argv[1]`` (a run's ``scale-realistic.json``) with the note ``argv[2]``."""
    here = Path(__file__).resolve().parent.parent
    report = json.loads((here / "scale-realistic.json").read_text(encoding="utf-8"))
    run = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    sizes = {s["docs"]: s for s in report["sizes"]}
    sizes.update({s["docs"]: s for s in run["sizes"]})
    report["sizes"] = [sizes[d] for d in sorted(sizes)]
    report["rows"] = list(dict.fromkeys(report["rows"] + run["rows"]))
    bw = max(report["bandwidth_bytes_per_s"], run["bandwidth_bytes_per_s"],
             key=lambda b: b["best"])
    report["bandwidth_bytes_per_s"] = bw
    synthetic.set_floors(report)
    report["bandwidth_note"] = sys.argv[2]
    synthetic._write(report, here)


if __name__ == "__main__":
    main()
