"""The fitting script's choices: which features each speaker kind may use, and the floor."""

from __future__ import annotations

import numpy as np
import pytest

from octomem.benchmarks import fit_ranking
from octomem.benchmarks.fit_ranking import Asked, choose_floor, fit_reranker
from octomem.plugins.conversation.features import FEATURES


def _asked(rng: np.random.Generator, kind: int, n: int = 60) -> Asked:
    x = rng.normal(size=(n, len(FEATURES)))
    y = (x[:, 0] + x[:, len(FEATURES) - 1] + rng.normal(scale=0.5, size=n) > 1.5).astype(float)
    y[0] = 1.0
    return Asked(True, np.full(n, kind), x, y, np.zeros(n), np.zeros(n), "g")


def test_a_kind_keeps_zero_weights_for_the_features_it_may_not_use(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(3)
    asked = [_asked(rng, 0) for _ in range(20)] + [_asked(rng, 1) for _ in range(20)]
    monkeypatch.setattr(fit_ranking, "KIND_FEATURES",
                        {"peer": FEATURES, "user": FEATURES[:9], "assistant": FEATURES})
    weights = fit_reranker(asked)
    peer, user = np.array(weights["peer"]), np.array(weights["user"])
    assert len(peer) == len(user) == len(FEATURES) + 1
    assert np.all(user[9:-1] == 0.0) and user[0] > 0.5      # kw fitted, coverage held at 0
    assert peer[len(FEATURES) - 1] > 0.5                      # the last column carries signal
    assert weights["assistant"] == []                         # no assistant turns at all


def test_the_floor_balances_both_sets_and_prefers_the_higher_of_ties() -> None:
    # set a separates at 0.05 (own >= 0.05, other < 0.05); set b's other reach 0.08
    per_set = {"a": ([0.05, 0.2, 0.3, 0.4], [0.01, 0.02, 0.03, 0.049]),
               "b": ([0.09, 0.1, 0.5, 0.6], [0.01, 0.02, 0.07, 0.08])}
    # 0.05 is perfect for a, 0.75 for b (mean 0.875); 0.09 is 0.875 for a, perfect for b
    # (mean 0.9375): the floor that serves both sets
    assert choose_floor(per_set) == pytest.approx(0.09)
    assert choose_floor({"a": per_set["a"]}) == pytest.approx(0.05)
    # every floor in (0.02, 0.1] separates this set perfectly: the highest is taken
    assert choose_floor({"c": ([0.1, 0.3], [0.01, 0.02])}) == pytest.approx(0.1)
    with pytest.raises(ValueError, match="b: no own"):
        choose_floor({"b": ([], [0.1])})
