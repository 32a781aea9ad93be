from __future__ import annotations

from pathlib import Path
from typing import Any

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


def _hits(fused: list[Any], turns: set[int]) -> list[Any]:
    from types import SimpleNamespace

    return [SimpleNamespace(chunk=SimpleNamespace(
        id=f.chunk_id, metadata={"conversation": "c", "position": f.chunk_id}
        if f.chunk_id in turns else {}), contributions=f.contributions) for f in fused]


@given(st.lists(st.floats(0.0, 30.0), min_size=1, max_size=12, unique=True),
       st.lists(st.floats(-1.0, 1.0), min_size=1, max_size=12, unique=True),
       st.integers(0, 2))
def test_documents_take_the_weighted_order_turns_keep_their_places(
        bm25: list[float], cos: list[float], shift: int) -> None:
    from octomem.engine.fusion import order_documents

    kw = run("bm25", list(range(len(bm25))), sorted(bm25, reverse=True))
    vec = run("vec", [i + shift for i in range(len(cos))], sorted(cos, reverse=True))
    fused = reciprocal_rank_fusion([kw, vec], k=2)
    assert order_documents([], fused, "rrf", "weighted") == []
    expected = [f.chunk_id for f in weighted_score_fusion([kw, vec])]
    # a store of documents only: exactly weighted score fusion's order
    ordered = order_documents(_hits(fused, set()), fused, "rrf", "weighted")
    assert [h.chunk.id for h in ordered] == expected
    # turns stay where RRF put them; the documents fill the other places, weighted order
    turns = {f.chunk_id for f in fused[::2]}
    mixed = [h.chunk.id for h in order_documents(_hits(fused, turns), fused, "rrf", "weighted")]
    assert [c for c, f in zip(mixed, fused, strict=True) if f.chunk_id in turns] == [
        f.chunk_id for f in fused if f.chunk_id in turns]
    assert [c for c in mixed if c not in turns] == [c for c in expected if c not in turns]
    # off, or when fusion is weighted already: nothing moves
    assert [h.chunk.id for h in order_documents(_hits(fused, set()), fused, "rrf", "rrf")] == [
        f.chunk_id for f in fused]


def test_document_fusion_in_a_real_pipeline(tmp_path: Path) -> None:
    from octomem.engine.manager import load_registry
    from octomem.engine.pipeline import Pipeline
    from octomem.engine.settings import load_settings
    from octomem.engine.types import Document, Query

    docs = [Document("cats sit on warm mats all day", id="d1"),
            Document("a cat and a dog", id="d2"),
            Document("mats woven from grass", id="d3"),
            Document("the weather today is warm", id="d4")]
    orders = {}
    for mode in ("rrf", "weighted"):
        settings = load_settings(None, {"pipeline": {"embedder": "hashing"},
                                        "retrieval": {"document_fusion": mode}},
                                 read_user_config=False)
        pipeline = Pipeline(settings, load_registry(), tmp_path / mode)
        pipeline.add(docs)
        answer = pipeline.search(Query("warm cat mats", top_k=4))
        orders[mode] = [h.chunk.document_id for h in answer.hits]
        assert [h.rank for h in answer.hits] == [1, 2, 3, 4]
        pipeline.close()
    settings = load_settings(None, {"pipeline": {"embedder": "hashing"},
                                    "retrieval": {"fusion": "weighted"}}, read_user_config=False)
    pipeline = Pipeline(settings, load_registry(), tmp_path / "all-weighted")
    pipeline.add(docs)
    weighted = [h.chunk.document_id
                for h in pipeline.search(Query("warm cat mats", top_k=4)).hits]
    pipeline.close()
    assert orders["weighted"] == weighted  # documents: the same order as weighted fusion
    assert sorted(orders["rrf"]) == sorted(weighted)


@given(st.lists(st.lists(st.tuples(st.sampled_from(["fts5", "sqlite-vec", "x"]),
                                   st.sampled_from([0.0, -0.0, 1.5, -2.0, 3.25, 1e-9])),
                         max_size=3), max_size=30))
def test_arm_bounds_are_the_min_and_max_of_each_arms_scores(entries: list[Any]) -> None:
    """:func:`arm_bounds` (one comparison per hit) equals the tuple-per-hit min()/max()
    fold it replaced, arm order and the sign of zeros included."""
    from types import SimpleNamespace

    from octomem.engine.fusion import arm_bounds

    fused = [SimpleNamespace(contributions={arm: Hit(i, score, 1, arm) for arm, score in hits})
             for i, hits in enumerate(entries)]
    want: dict[str, tuple[float, float]] = {}
    for entry in fused:
        for arm, hit in entry.contributions.items():
            lo, hi = want.get(arm, (hit.score, hit.score))
            want[arm] = (min(lo, hit.score), max(hi, hit.score))
    got = arm_bounds(fused)
    assert list(got) == list(want) and repr(got) == repr(want)


@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]),
                          st.lists(st.tuples(st.integers(0, 30),
                                             st.floats(-5, 5, allow_nan=False)),
                                   max_size=12)), max_size=4))
def test_run_bounds_are_the_entries_bounds_or_none(spec: list[Any]) -> None:
    from octomem.engine.fusion import arm_bounds, run_bounds

    runs = [[Hit(c, s, r, arm) for r, (c, s) in enumerate(hits, start=1)] for arm, hits in spec]
    got = run_bounds(runs)
    one_arm_each = len({arm for (arm, hits) in spec if hits}) == sum(1 for _, h in spec if h)
    once = all(len({c for c, _ in hits}) == len(hits) for _, hits in spec)
    if one_arm_each and once:
        assert got == arm_bounds(reciprocal_rank_fusion(runs))
    else:
        assert got is None
    mixed = [[Hit(1, 1.0, 1, "a"), Hit(2, 0.5, 2, "b")]]  # one run, two arms
    assert run_bounds(mixed) is None


def rrf_reference(runs: list[list[Hit]], k: int, weights: dict[str, float]) -> list[Any]:
    """Reciprocal rank fusion as it was written before ``rrf_ranking`` (Fused per chunk,
    one sort by (-score, id))."""
    from octomem.engine.fusion import Fused

    fused: dict[int, Fused] = {}
    for run in runs:
        for hit in run:
            share = weights.get(hit.arm, 1.0) / (k + hit.rank)
            entry = fused.get(hit.chunk_id)
            if entry is None:
                fused[hit.chunk_id] = Fused(hit.chunk_id, 0.0 + share, {hit.arm: hit})
            elif hit.arm not in entry.contributions:
                entry.contributions[hit.arm] = hit
                entry.score += share
    return sorted(fused.values(), key=lambda f: (-f.score, f.chunk_id))


@given(st.lists(st.tuples(st.sampled_from(["a", "b", "c"]),
                          st.lists(st.integers(0, 25), max_size=15)), max_size=4),
       st.integers(1, 100), st.dictionaries(st.sampled_from(["a", "b"]),
                                            st.floats(0.1, 3.0), max_size=2))
def test_rrf_ranking_is_the_reference_fusion(spec: list[Any], k: int,
                                             weights: dict[str, float]) -> None:
    from octomem.engine.fusion import rrf_ranking

    runs = [[Hit(c, 1.0, r, arm) for r, c in enumerate(ids, start=1)] for arm, ids in spec]
    want = [(f.chunk_id, f.score, f.contributions) for f in rrf_reference(runs, k, weights)]
    ranking = rrf_ranking(runs, k, weights)
    assert len(ranking) == len(want)
    assert [(f.chunk_id, f.score, f.contributions) for f in ranking] == want
    assert [(f.chunk_id, f.score) for f in ranking[:3]] == [w[:2] for w in want[:3]]
    assert [(f.chunk_id, f.score) for f in ranking[2:5]] == [w[:2] for w in want[2:5]]
    if want:
        assert ranking[-1].chunk_id == want[-1][0] and ranking[0].score == want[0][1]
    assert [(f.chunk_id, f.score, f.contributions)
            for f in reciprocal_rank_fusion(runs, k, weights)] == want
