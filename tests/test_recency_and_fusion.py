"""The recency bonus and cross-scope fusion, checked on numbers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from octomem.engine.memory.recency import DEFAULT_WEIGHT, MAX_WEIGHT, SECONDS_PER_DAY, recency_bonus
from octomem.engine.memory.scoped_fusion import ScopedRuns, fuse_scopes
from octomem.engine.settings import RetrievalSettings
from octomem.engine.types import Hit

NOW = 1_800_000_000.0


def test_bonus_halves_every_half_life_and_is_capped() -> None:
    assert recency_bonus(NOW, NOW, 0.05, 30) == pytest.approx(0.05)
    assert recency_bonus(NOW - 30 * SECONDS_PER_DAY, NOW, 0.05, 30) == pytest.approx(0.025)
    assert recency_bonus(NOW - 90 * SECONDS_PER_DAY, NOW, 0.05, 30) == pytest.approx(0.00625)
    assert recency_bonus(NOW + 5 * SECONDS_PER_DAY, NOW, 0.05, 30) == pytest.approx(0.05)
    assert recency_bonus(NOW, NOW, 0.5, 30) == MAX_WEIGHT == 0.1
    assert recency_bonus(NOW, NOW, -1.0, 30) == 0.0
    assert DEFAULT_WEIGHT <= MAX_WEIGHT
    with pytest.raises(ValueError):
        recency_bonus(NOW, NOW, 0.05, 0)


@given(
    strong=st.floats(1e-4, 1.0), ratio=st.floats(1.0, 50.0),
    age_strong=st.floats(0, 3650), age_weak=st.floats(0, 3650),
    weight=st.floats(0.0, 0.1), half_life=st.floats(0.1, 365),
)
def test_a_clearly_weaker_match_is_never_lifted(
    strong: float, ratio: float, age_strong: float, age_weak: float, weight: float,
    half_life: float,
) -> None:
    """Whatever the ages: a hit weaker by more than the weight stays below."""
    weak = strong / ((1 + weight) * ratio) * 0.999999
    boosted_strong = strong * (1 + recency_bonus(NOW - age_strong * SECONDS_PER_DAY, NOW,
                                                 weight, half_life))
    boosted_weak = weak * (1 + recency_bonus(NOW - age_weak * SECONDS_PER_DAY, NOW, weight,
                                             half_life))
    assert boosted_strong > boosted_weak
    assert boosted_strong <= strong * (1 + weight) + 1e-12


def _run(arm: str, *scored: tuple[int, float]) -> list[Hit]:
    return [Hit(cid, score, rank, arm) for rank, (cid, score) in enumerate(scored, start=1)]


def test_cosine_runs_merge_by_score_keyword_runs_by_rank() -> None:
    runs = ScopedRuns(by_score=frozenset({"sqlite-vec"}))
    runs.add("local", 0, _run("sqlite-vec", (1, 0.40), (2, 0.30)))
    runs.add("global", 1, _run("sqlite-vec", (1, 0.90), (7, 0.35)))
    runs.add("local", 0, _run("fts5", (2, 3e-6), (5, 1e-6)))  # a tiny index: idf ~ 0
    runs.add("global", 1, _run("fts5", (3, 9.5), (1, 4.0)))
    fused = fuse_scopes(runs, 10, RetrievalSettings(rrf_k=60))
    vec = {f.key: f.contributions["sqlite-vec"].rank for f in fused
           if "sqlite-vec" in f.contributions}
    assert vec == {("global", 1): 1, ("local", 1): 2, ("global", 7): 3, ("local", 2): 4}
    kw = {f.key: f.contributions["fts5"].rank for f in fused if "fts5" in f.contributions}
    assert kw == {("local", 2): 1, ("global", 3): 1, ("local", 5): 3, ("global", 1): 3}
    assert all(h.chunk_id == f.key[1] for f in fused for h in f.contributions.values())
    scores = {f.key: f.score for f in fused}
    assert scores[("global", 1)] == pytest.approx(1 / 61 + 1 / 63)
    assert scores[("local", 2)] == pytest.approx(1 / 61 + 1 / 64)
    assert [f.key for f in fused][:2] == [("global", 1), ("local", 2)]


def test_equal_scores_share_a_rank() -> None:
    runs = ScopedRuns(by_score=frozenset({"v"}))
    runs.add("local", 0, _run("v", (1, 0.5), (2, 0.5), (3, 0.1)))
    runs.add("global", 1, _run("v", (1, 0.5)))
    runs.add("local", 0, _run("fts5", (1, 2.0), (2, 2.0), (3, 1.0)))
    merged = dict((run[0].arm, run) for run in runs.merged(10))
    assert [h.rank for h in merged["v"]] == [1, 1, 1, 4]
    assert [h.rank for h in merged["fts5"]] == [1, 1, 3]


def test_weighted_fusion_across_scopes() -> None:
    runs = ScopedRuns(by_score=frozenset({"v"}))
    runs.add("local", 0, _run("v", (1, 0.8), (2, 0.4)))
    runs.add("global", 1, _run("v", (1, 0.6)))
    fused = fuse_scopes(runs, 10, RetrievalSettings(fusion="weighted"))
    assert [(f.key, round(f.score, 3)) for f in fused] == [
        (("local", 1), 1.0), (("global", 1), 0.5), (("local", 2), 0.0)]
