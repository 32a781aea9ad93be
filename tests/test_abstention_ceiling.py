"""``benchmarks/abstention_ceiling.py``: the trade-off figures and the grouped folds of the
SciFact abstention study (hand-counted scores)."""

from __future__ import annotations

import numpy as np

from octomem.benchmarks.abstention_ceiling import (
    empty_at_kept,
    grouped_folds,
    kept_at_empty,
    out_of_fold,
    roc_auc,
)


def test_auc_counts_the_pairs_a_positive_wins_and_halves_ties() -> None:
    y = np.array([1, 1, 0, 0])
    assert roc_auc(np.array([0.9, 0.4, 0.5, 0.1]), y) == 0.75  # 3 of 4 pairs
    assert roc_auc(np.array([0.5, 0.5, 0.5, 0.1]), y) == 0.75  # a tie counts one half
    assert roc_auc(np.array([0.1, 0.2, 0.8, 0.9]), y) == 0.0


def test_the_curve_reads_the_floor_from_one_class_and_counts_the_other() -> None:
    pos = [0.1, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.96, 0.97, 0.99]
    neg = [0.05, 0.2, 0.3, 0.55, 0.65]
    s, y = np.array(pos + neg), np.array([1] * 10 + [0] * 5)
    # keeping 90 % of the positives puts the floor at 0.5: 3 of 5 negatives fall below
    assert empty_at_kept(s, y, 0.90) == 0.6
    # keeping all puts it at 0.1: only 0.05 is below
    assert empty_at_kept(s, y, 1.0) == 0.2
    # emptying 80 % of the negatives (4 of 5, 0.55 the 4th) keeps the 8 positives above 0.55
    assert kept_at_empty(s, y, 0.80) == 0.8


def test_a_claims_answers_share_a_fold() -> None:
    groups = np.array(["a", "a", "b", "c", "c", "d", "e", "e"])
    fold = grouped_folds(groups, folds=3, seed=1)
    assert fold[0] == fold[1] and fold[3] == fold[4] and fold[6] == fold[7]
    assert set(fold) == {0, 1, 2}


def test_out_of_fold_scores_separate_a_separable_feature() -> None:
    rng = np.random.default_rng(0)
    y = np.array([1, 0] * 50)
    x = (y + rng.normal(0, 0.1, 100))[:, None]  # the label plus a little noise
    fold = grouped_folds(np.arange(100) // 2, folds=5, seed=0)
    assert roc_auc(out_of_fold(x, y, fold), y) == 1.0
    noise = rng.normal(0, 1, (100, 1))
    assert roc_auc(out_of_fold(noise, y, fold), y) < 0.7
