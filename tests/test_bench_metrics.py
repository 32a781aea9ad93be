"""Metric plumbing: our evaluation equals ranx's own numbers on a tiny hand-checkable run."""

from __future__ import annotations

import pytest
from ranx import Qrels, Run, compare, evaluate

from octomem.benchmarks.metrics import METRICS, NO_HIT, best_of, evaluate_runs
from octomem.benchmarks.runner import document_run
from octomem.engine.types import Answer, Chunk, FusedHit

QRELS = {"q1": {"d1": 1, "d3": 2}, "q2": {"d2": 1}, "q3": {"d9": 1}}
# q1: d3 (grade 2) at rank 2, d1 at rank 3; q2: d2 at rank 1; q3: nothing relevant retrieved.
RUN_A = {"q1": {"d7": 3.0, "d3": 2.0, "d1": 1.0}, "q2": {"d2": 1.0}, "q3": {"d8": 1.0}}
# q2 is missing from run B entirely (no hit), q1 has its relevant documents on top.
RUN_B = {"q1": {"d3": 2.0, "d1": 1.0}, "q3": {"d9": 1.0}}


def _ranx(run: dict[str, dict[str, float]]) -> dict[str, float]:
    """ranx's own numbers, with a query without hits given an irrelevant document."""
    filled = {q: run.get(q) or {"never-relevant": 0.0} for q in QRELS}
    return evaluate(Qrels(QRELS), Run(filled), list(METRICS))


def test_scores_equal_ranx_evaluate() -> None:
    result = evaluate_runs(QRELS, {"a": RUN_A, "b": RUN_B}, baseline="a")
    for name, run in (("a", RUN_A), ("b", RUN_B)):
        expected = _ranx(run)
        for metric in METRICS:
            assert result.scores[name][metric] == pytest.approx(expected[metric])


def test_p_values_equal_ranx_compare() -> None:
    result = evaluate_runs(QRELS, {"a": RUN_A, "b": RUN_B}, baseline="a")
    filled = [
        Run({q: r.get(q) or {"x": 0.0} for q in QRELS}, name=n)
        for n, r in (("a", RUN_A), ("b", RUN_B))
    ]
    expected = compare(Qrels(QRELS), filled, list(METRICS), stat_test="student").to_dict()
    assert set(result.p_values) == {"b"}
    for metric in METRICS:
        assert result.p_values["b"][metric] == pytest.approx(
            expected["b"]["comparisons"]["a"][metric]
        )


def test_a_query_without_hits_scores_zero() -> None:
    result = evaluate_runs({"q2": {"d2": 1}}, {"empty": {}}, baseline=None)
    assert all(result.scores["empty"][m] == 0.0 for m in METRICS)
    assert NO_HIT not in QRELS["q2"]


def test_single_run_is_evaluated() -> None:
    result = evaluate_runs(QRELS, {"a": RUN_A}, baseline=None)
    assert result.scores["a"]["recall@100"] == pytest.approx(_ranx(RUN_A)["recall@100"])
    assert result.p_values == {}


def test_best_of_picks_highest_ndcg_first_on_ties() -> None:
    scores = {"x": {"ndcg@10": 0.5}, "y": {"ndcg@10": 0.7}, "z": {"ndcg@10": 0.7}}
    assert best_of(scores, ["x", "y", "z"]) == "y"
    assert best_of(scores, []) is None


def _hit(chunk_id: int, doc: str, rank: int) -> FusedHit:
    return FusedHit(Chunk(document_id=doc, ordinal=0, text="t", id=chunk_id), 1.0 / rank, rank)


def test_document_run_keeps_answer_order_and_best_chunk() -> None:
    answer = Answer(
        hits=[_hit(5, "d2", 1), _hit(9, "d1", 2), _hit(6, "d2", 3), _hit(1, "d3", 4)],
        arms_ran=[],
        arms_unavailable={},
        semantic_available=False,
    )
    run = document_run(answer)
    assert list(run) == ["d2", "d1", "d3"]
    assert run["d2"] > run["d1"] > run["d3"] > 0
