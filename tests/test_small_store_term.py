"""The small-store term of a turn's or statement's relevance (issue 12, relevance): a query
compared with fewer than ``SMALL_STORE`` chunks (its semantic runs shorter than asked)
gets ``small_store · ln(SMALL_STORE / reach)`` added to its logit; a full run, none.
Its weight is chosen by ``benchmarks/fit_turn_relevance.py`` on small stores drawn from
the tune splits, after the other weights and the floor."""

from __future__ import annotations

import math

import numpy as np
import pytest

from octomem.benchmarks.fit_turn_relevance import Answer, fit, shares
from octomem.engine.relevance import RelevanceModel, relevance_of, run_stats, shipped_model
from octomem.engine.small_store import SMALL_STORE, SMALL_STORE_LEAST, short_run, small_term

MODEL = RelevanceModel((5.8, 5.6, -3.3, -7.1), (5.3, -5.3), "fastembed:all-MiniLM",
                       unheard=-0.5, small_store=0.75)


def test_the_shipped_weights_have_a_small_store_weight() -> None:
    assert shipped_model().small_store > 0


@pytest.mark.parametrize("reach", [None, SMALL_STORE, SMALL_STORE + 1, 10_000])
def test_a_full_run_or_a_large_store_adds_nothing(reach: int | None) -> None:
    assert small_term(0.75, reach) == 0.0
    assert MODEL.probability(0.5, 0.2, 1, reach=reach) == MODEL.probability(0.5, 0.2, 1)


def test_the_term_grows_as_the_store_shrinks_down_to_its_least_reach() -> None:
    terms = [small_term(0.75, n) for n in (99, 50, 30, SMALL_STORE_LEAST, 12, 1, 0)]
    assert terms == sorted(terms)
    assert small_term(0.75, 50) == pytest.approx(0.75 * math.log(2))
    # below the least reach it stops growing: a one-note store gains no more than 25 notes
    assert small_term(0.75, 1) == small_term(0.75, SMALL_STORE_LEAST)
    assert small_term(0.75, 0, least=1) == pytest.approx(2 * small_term(0.75, 10, least=1))
    assert small_term(0.0, 5) == 0.0
    assert MODEL.probability(0.5, 0.2, reach=12) > MODEL.probability(0.5, 0.2)


def test_the_term_needs_a_cosine_and_the_turn_weights() -> None:
    # keyword-only weights (no cosine): the term was chosen with MiniLM cosines
    assert MODEL.probability(None, 0.5, reach=5) == MODEL.probability(None, 0.5)
    small = relevance_of("postgres version", "We run PostgreSQL 16", 0.6, 0.033, MODEL,
                         "fastembed:all-MiniLM-L6-v2", reach=12)
    full = relevance_of("postgres version", "We run PostgreSQL 16", 0.6, 0.033, MODEL,
                        "fastembed:all-MiniLM-L6-v2")
    assert small.reach == 12 and full.reach is None
    assert small.probability > full.probability
    other = relevance_of("postgres version", "We run PostgreSQL 16", 0.6, 0.033, MODEL,
                         "another:model", reach=12)
    assert other.reach is None and other.cos is None


def test_a_short_semantic_run_is_the_reach() -> None:
    assert short_run(12, 100) == 12
    assert short_run(100, 100) is None
    assert short_run(5, None) is None
    assert run_stats([0.5] * 12, [1.0], 100).reach == 12
    assert run_stats([0.5] * 100, [1.0], 100).reach is None
    assert run_stats([], [1.0, 2.0], 100).reach is None  # no semantic run: no cosine


def _answers(logits: list[float], own: bool, reach: int | None) -> list[Answer]:
    return [Answer(own, own, np.array([z]), 0, None, reach) for z in logits]


def test_the_fit_chooses_the_small_store_weight_after_the_rest() -> None:
    # whole groups: a floor separates them; small stores (reach 10): every own answer
    # sits 1.5 logits lower, so the floor alone keeps too few of them
    full = (_answers(list(np.linspace(-2.0, 0.0, 40)), True, None)
            + _answers(list(np.linspace(-8.0, -4.5, 40)), False, None))
    small = (_answers(list(np.linspace(-3.5, -1.5, 40)), True, 10)
             + _answers(list(np.linspace(-9.0, -5.5, 40)), False, 10))
    result = fit({"a": full + small})
    chosen = float(result["small_store"])  # type: ignore[arg-type]
    assert chosen > 0
    floor, unheard = float(result["floor"]), float(result["unheard"])  # type: ignore[arg-type]
    kept, empty = shares(small, unheard, floor, small=chosen,
                         least=int(result["small_store_least"]))  # type: ignore[call-overload]
    assert kept >= 0.95 and empty >= 0.9
    assert shares(small, unheard, floor)[0] < 0.95  # without the term too few kept
    # the whole groups' figures are the first stage's, the term is 0 there
    assert result["per_set"]["a"]["kept_own"] == round(  # type: ignore[index]
        shares(full, unheard, floor)[0], 4)
    assert "a (small stores)" in result["per_set"]  # type: ignore[operator]
    assert result["small_store_least"] in (1, 2, 5, 10, 15, 20, 25, 30, 40, 50)


def test_without_small_stores_no_weight_is_chosen() -> None:
    full = (_answers([0.0, 1.0], True, None) + _answers([-6.0, -5.0], False, None))
    assert "small_store" not in fit({"a": full})
