"""Leave-one-group-out refits over ``fit_ranking collect``'s candidates: the shipped 13
columns against the 16 with the soft coverage columns (2026-12-03, tune only).

``python benchmarks/results/conversations/ranking-2026-12-03/folds.py locomo_tune.pkl
lme_tune.pkl`` prints, per tune set, nDCG@10 and R@10 over the candidates with each kind's
weights refitted without the held-out fold (LoCoMo: one conversation per fold; LongMemEval:
5 folds of questions), the paired t-test over questions, and per held-out group.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from octomem.benchmarks.fit_ranking import Asked, logistic, ndcg10  # noqa: F401
from octomem.plugins.conversation.options import ADDRESSED_BONUS
from octomem.plugins.conversation.ranker import addressed_bonus

COLUMNS = {"13 columns (shipped)": 13, "16 columns (+ soft coverage)": 16}


def loo(own: list[Any], width: int, fold_of: dict[str, int]) -> np.ndarray:
    out = np.zeros((len(own), 2))
    for f in sorted(set(fold_of.values())):
        train = [a for a in own if fold_of[a.group] != f]
        betas = {}
        for k in range(3):
            ys = [a.y[a.kinds == k] for a in train]
            if len(ys) and np.concatenate(ys).any():
                xs = [
                    np.hstack([a.x[a.kinds == k][:, :width], np.ones(((a.kinds == k).sum(), 1))])
                    for a in train
                ]
                betas[k] = logistic(np.vstack(xs), np.concatenate(ys))
        for i, a in enumerate(own):
            if fold_of[a.group] != f:
                continue
            score = np.zeros(len(a.y))
            for k, b in betas.items():
                sel = a.kinds == k
                score[sel] = a.x[sel][:, :width] @ b[:-1] + b[-1]
            score += addressed_bonus(a.kinds, a.recalls, ADDRESSED_BONUS)
            order = np.argsort(-score, kind="stable")
            out[i] = ndcg10(a.y, order, int(a.y.sum())), a.y[order[:10]].sum() / a.y.sum()
    return out


def main() -> None:
    for path in sys.argv[1:]:
        asked = pickle.loads(Path(path).read_bytes())
        own = [a for a in asked if a.own and a.y.any()]
        groups = sorted({a.group for a in own})
        fold_of = {g: i % 5 for i, g in enumerate(groups)}
        runs = {name: loo(own, w, fold_of) for name, w in COLUMNS.items()}
        base, new = runs.values()
        print(f"{Path(path).name}: {len(own)} questions with evidence among the candidates")
        for name, r in runs.items():
            print(f"  {name}: nDCG@10 {r[:, 0].mean():.4f}  R@10 {r[:, 1].mean():.4f}")
        for j, m in enumerate(("nDCG@10", "R@10")):
            p = stats.ttest_rel(new[:, j], base[:, j]).pvalue
            print(
                f"  {m}: better {(new[:, j] > base[:, j]).sum()}, worse "
                f"{(new[:, j] < base[:, j]).sum()}, paired t p {p:.4f}"
            )
        if len(groups) <= 5:
            for g in groups:
                sel = np.array([a.group == g for a in own])
                print(
                    f"  {g} ({sel.sum()}): {base[sel, 0].mean():.4f} / {base[sel, 1].mean():.4f}"
                    f" -> {new[sel, 0].mean():.4f} / {new[sel, 1].mean():.4f}"
                )


if __name__ == "__main__":
    main()
