"""Own kept and other empty as ``retrieval.relevance_floor`` moves, every pair (tune only).

    python frontier.py ANSWERS.pkl ...

``ANSWERS.pkl``: ``collect.py full`` answers (each tune question asked of its own group
and of every other one, floors 0). An answer is kept / empty by its best hit's shipped
relevance against the floor, as ``recall`` judges it.
"""
from __future__ import annotations

import math
import pickle
import sys
from pathlib import Path

import numpy as np

FLOOR = math.log(0.033 / 0.967)  # retrieval.relevance_floor as a logit
SHIFTS = (-3.0, -2.0, -1.0, -0.5, -0.25, 0.0, 0.04, 0.25, 0.5, 1.0)


def logit(p: float) -> float:
    p = min(max(p, 1e-12), 1 - 1e-12)
    return math.log(p / (1 - p))


def best(row: dict) -> float:
    return max((logit(h["prob"]) for h in row["hits"] if h["prob"] is not None), default=-50.0)


def sigmoid(z: float) -> float:
    return 1 / (1 + math.exp(-z))


for path in sys.argv[1:]:
    rows = pickle.loads(Path(path).read_bytes())
    own = np.array([best(r) for r in rows if r["own"] and r["evidence"]])
    oth = np.array([best(r) for r in rows if not r["own"]])
    print(f"== {Path(path).stem}: {len(own)} own answers with evidence in the top 10, "
          f"{len(oth)} asked of another group; floor 0.033 = logit {FLOOR:.3f}")
    print("own margins over the floor (logit), lowest:",
          np.round(np.sort(own)[:6] - FLOOR, 3).tolist())
    for d in SHIFTS:
        f = FLOOR + d
        print(f"floor {sigmoid(f):.4f} ({d:+.2f} logit): own kept {int((own >= f).sum())}/"
              f"{len(own)} {np.mean(own >= f):.3f}, other empty {int((oth < f).sum())}/"
              f"{len(oth)} {np.mean(oth < f):.3f}")
    for need in (0.95, 0.97, 1.0):
        f = np.sort(own)[len(own) - int(math.ceil(need * len(own)))]
        print(f"own kept >= {need}: floor <= {sigmoid(f):.4f}, other empty at most "
              f"{np.mean(oth < f):.3f}")
