from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from octomem.engine.fusion import reciprocal_rank_fusion, weighted_score_fusion
from octomem.engine.types import Hit


def run(arm: str, ids: list[int], scores: list[float] | None = None) -> list[Hit]:
    scores = scores or [float(len(ids) - i) for i in range(len(ids))]
    return [Hit(c, s, r, arm) for r, (c, s) in enumerate(zip(ids, scores, strict=True), start=1)]


def test_rrf_scores_are_sums_of_reciprocal_ranks() -> None:
    fused = reciprocal_rank_fusion([run("bm25", [1, 2, 3]), run("vec", [3, 1])], k=60)
    by_id = {f.chunk_id: f.score for f in fused}
    assert by_id[1] == pytest.approx(1 / 61 + 1 / 62)
    assert by_id[3] == pytest.approx(1 / 63 + 1 / 61)
    assert by_id[2] == pytest.approx(1 / 62)
    assert [f.chunk_id for f in fused] == [1, 3, 2]


def test_rrf_keeps_each_arms_rank_and_raw_score() -> None:
    fused = reciprocal_rank_fusion([run("bm25", [7], [12.5]), run("vec", [9, 7], [0.9, 0.4])])
    seven = next(f for f in fused if f.chunk_id == 7)
    assert seven.contributions["bm25"].rank == 1 and seven.contributions["bm25"].score == 12.5
    assert seven.contributions["vec"].rank == 2 and seven.contributions["vec"].score == 0.4


def test_rrf_weights_scale_an_arm() -> None:
    fused = reciprocal_rank_fusion([run("a", [1]), run("b", [2])], k=60, weights={"b": 2.0})
    assert [f.chunk_id for f in fused] == [2, 1]
    assert fused[0].score == pytest.approx(2 / 61)


def test_rrf_rejects_k_below_one() -> None:
    with pytest.raises(ValueError, match="k must be >= 1"):
        reciprocal_rank_fusion([run("a", [1])], k=0)


def test_weighted_fusion_normalises_each_run() -> None:
    fused = weighted_score_fusion([run("a", [1, 2, 3], [10.0, 5.0, 0.0]), run("b", [3], [0.8])])
    by_id = {f.chunk_id: f.score for f in fused}
    assert by_id == pytest.approx({1: 1.0, 2: 0.5, 3: 1.0})
    assert [f.chunk_id for f in fused] == [1, 3, 2]  # tie broken by chunk id


@given(st.lists(st.lists(st.integers(0, 50), unique=True, max_size=20), max_size=4))
def test_rrf_is_ordered_and_covers_every_chunk(id_lists: list[list[int]]) -> None:
    runs = [run(f"arm{i}", ids) for i, ids in enumerate(id_lists)]
    fused = reciprocal_rank_fusion(runs)
    assert {f.chunk_id for f in fused} == {c for ids in id_lists for c in ids}
    scores = [f.score for f in fused]
    assert scores == sorted(scores, reverse=True)
