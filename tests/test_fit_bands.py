"""``benchmarks/fit_bands.py``: the choice of ``medium``'s bound and the weak-answer cut
from answers an agent is shown (synthetic answers with known evidence)."""

from __future__ import annotations

import numpy as np

from octomem.benchmarks.fit_bands import Shown, answering_from, fit, weak_loss


def shown(own: bool, probability: list[float], evidence: list[bool]) -> Shown:
    p = np.array(probability)
    return Shown(own, p, np.array(evidence), p >= 0.033)


def test_medium_starts_where_a_third_of_the_answers_hold_evidence() -> None:
    answers = [
        *(shown(False, [0.065, 0.01], [False, False]) for _ in range(6)),  # false, weak
        shown(True, [0.045, 0.02], [True, False]),
        *(shown(False, [0.2, 0.1], [False, False]) for _ in range(2)),
        shown(True, [0.3, 0.004], [False, True]),                          # evidence 2nd
    ]
    assert answering_from(answers, 0.04) == (10, 0.2)
    assert answering_from(answers, 0.06) == (9, 1 / 9)
    assert answering_from(answers, 0.07) == (3, 1 / 3)
    result = fit({"a": answers})
    assert result["medium"] == 0.07  # the first bound whose answers hold it 1 time in 3
    # the weak answers' only evidence passes the floor, and the 0.004 evidence hit is in
    # a strong answer: no cut loses any
    assert result["weak_answer_floor"] == 0.03


def test_the_weak_cut_keeps_evidence_within_its_loss() -> None:
    answers = [shown(True, [0.05, 0.012, 0.004], [False, True, False])]
    kept, lost, before, after = weak_loss(answers, 0.07, 0.01)
    assert (kept, lost, before, after) == (1, 0, 3.0, 2.0)
    assert weak_loss(answers, 0.07, 0.015)[1] == 1  # the 0.012 evidence hit
    assert weak_loss(answers, 0.05, 0.015)[:2] == (0, 0)  # not a weak answer there
