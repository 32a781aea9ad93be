"""Run ``octomem ARGS`` with the long-turn rule as main had it before (``before``: a turn's
chunks each keep the reranker's place), as landed (``A``), or with variant ``B``
(:mod:`b_variant`); with ``SPY_OUT=FILE``, each abstention-pass recall is written to FILE
(:mod:`spy_ids`).

usage: PYTHONPATH=THIS_FOLDER python drive.py MODE octomem-args...
"""

from __future__ import annotations

import os
import sys

import b_variant
import spy_ids

import octomem.engine.rerank as rerank
from octomem.engine.cli import main

if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "before":
        rerank.one_place_per_turn = lambda hits, order, scored: order
    elif mode == "B":
        b_variant.install()
    elif mode != "A":
        raise SystemExit(f"unknown mode {mode}: before, A or B")
    if os.environ.get("SPY_OUT"):
        spy_ids.install(os.environ["SPY_OUT"])
    sys.argv = ["octomem", *sys.argv[2:]]
    main()
