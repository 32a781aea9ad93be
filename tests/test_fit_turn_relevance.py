"""``benchmarks/fit_turn_relevance.py``: the choice of the unheard weight and the floor."""

from __future__ import annotations

import numpy as np
import pytest

from octomem.benchmarks.fit_turn_relevance import Answer, fit, shares


def _set(own_logits: list[float], own_unheard: list[int], other_logits: list[float],
         other_unheard: list[int]) -> list[Answer]:
    own = [Answer(True, True, np.array([z, z - 2.0]), u)
           for z, u in zip(own_logits, own_unheard, strict=True)]
    other = [Answer(False, False, np.array([z]), u)
             for z, u in zip(other_logits, other_unheard, strict=True)]
    return own + other


def test_a_weight_is_chosen_when_unheard_words_tell_the_two_apart() -> None:
    # own answers and foreign ones overlap in logit; the foreign ones have unheard words
    own = list(np.linspace(-3.0, -1.0, 20))
    other = list(np.linspace(-3.2, -1.2, 40))
    sets = {"a": _set(own, [0] * 20, other, [2] * 40),
            "b": _set(own, [0] * 19 + [1], other, [1] * 40)}
    result = fit(sets)
    assert result["unheard"] < 0
    for name, answers in sets.items():
        kept, empty = shares(answers, result["unheard"], result["floor"])
        assert result["per_set"][name] == {"kept_own": round(kept, 4),
                                           "abstained_other": round(empty, 4),
                                           "own_questions": 20, "other_questions": 40}
        assert kept >= 0.95 and empty >= 0.9
    # without the term no floor separates them as well
    best0 = max(min(min(shares(a, 0.0, f)) for a in sets.values())
                for f in np.arange(0.01, 0.2, 0.001))
    assert best0 < 0.9


def test_no_weight_when_unheard_words_say_nothing() -> None:
    own = list(np.linspace(-1.0, 1.0, 20))
    other = list(np.linspace(-6.0, -4.0, 20))
    result = fit({"a": _set(own, [1] * 20, other, [1] * 20)})
    assert result["unheard"] == 0.0  # ties keep the weight nearer 0
    assert result["per_set"]["a"]["kept_own"] == 1.0
    assert result["per_set"]["a"]["abstained_other"] == 1.0


def test_a_set_without_negatives_is_refused() -> None:
    with pytest.raises(ValueError, match="only-own: no own or no other-group"):
        fit({"only-own": _set([0.0], [0], [], [])})
