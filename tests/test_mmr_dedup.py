"""The ``mmr`` dedup: maximal marginal relevance with values that can be checked by hand.

With λ = 0.7, MR(d) = 0.7·rel(d) − 0.3·max sim(d, chosen); rel is score / best score.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from octomem.engine.cli import app
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Chunk, Document, FusedHit, Hit, Query
from octomem.plugins.dedup.mmr import MmrDedup, MmrOptions, relevance

DIM = 4


def _hits(*pairs: tuple[str, float]) -> list[FusedHit]:
    """Fused hits with chunk ids 10, 11, ... for (text, fused score) pairs, ranks 1..n."""
    return [
        FusedHit(
            chunk=Chunk(document_id=f"d{i}", ordinal=0, text=text, id=10 + i),
            score=score, rank=i + 1, contributions={"fts5": Hit(10 + i, 9.0 - i, i + 1, "fts5")},
        )
        for i, (text, score) in enumerate(pairs)
    ]


def _rows(*rows: list[float]) -> np.ndarray:
    return np.array(rows, dtype=np.float32)


E0, E2 = [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]
NEAR_E0_90 = [0.9, float(np.sqrt(1 - 0.81)), 0.0, 0.0]  # cosine 0.90 to E0
NEAR_E0_98 = [0.98, float(np.sqrt(1 - 0.98**2)), 0.0, 0.0]  # cosine 0.98 to E0


def _ids(hits: list[FusedHit]) -> list[int]:
    return [h.chunk.id for h in hits]


def test_registered_with_its_options_model_and_defaults() -> None:
    spec = load_registry().get("dedup", "mmr")
    assert spec.options_model is MmrOptions
    options = spec.options_model()
    assert (options.relevance_weight, options.min_marginal_relevance) == (0.7, 0.0)


def test_relevance_is_the_score_over_the_best_by_position() -> None:
    np.testing.assert_allclose(relevance([0.03, 0.02, 0.01]), [1.0, 2 / 3, 1 / 3])
    np.testing.assert_allclose(relevance([1.0, 0.0, -1.0]), [1.0, 0.5, 0.0])  # lo = -1
    np.testing.assert_allclose(relevance([0.5, 0.5]), [1.0, 1.0])
    np.testing.assert_allclose(relevance([0.0, 0.0]), [1.0, 1.0])
    # a reranker reordered the hits but left their fused scores: the order decides
    np.testing.assert_allclose(relevance([0.02, 0.03, 0.01]), [1.0, 2 / 3, 1 / 3])
    assert relevance([]).shape == (0,)


def test_a_diverse_hit_moves_above_a_redundant_one() -> None:
    # rel = 1, .9, .8. After A: MR(B) = .63 - .3*.9 = .36, MR(C) = .56 - 0 = .56 -> C.
    # Then MR(B) = .36 >= 0: kept, last.
    hits = _hits(("A", 1.0), ("B", 0.9), ("C", 0.8))
    kept, collapsed = MmrDedup().dedup(hits, _rows(E0, NEAR_E0_90, E2))
    assert [(h.chunk.id, h.rank) for h in kept] == [(10, 1), (12, 2), (11, 3)]
    assert collapsed == []
    assert [h.score for h in kept] == [1.0, 0.8, 0.9]  # fused scores untouched
    assert kept[1].contributions == hits[2].contributions


def test_a_low_relevance_near_copy_is_dropped_with_its_marginal_relevance() -> None:
    # rel = 1, .4, .3. After A: MR(C) = .28, MR(B) = .21 - .3*.98 = -.084 -> C.
    # Then MR(B) = -.084 < 0: dropped, most similar to A.
    hits = _hits(("A", 1.0), ("C", 0.4), ("B", 0.3))
    kept, collapsed = MmrDedup().dedup(hits, _rows(E0, E2, NEAR_E0_98))
    assert _ids(kept) == [10, 11]
    assert [(c.chunk_id, c.kept_chunk_id, c.reason) for c in collapsed] == [
        (12, 10, "mmr -0.084 < 0 (relevance 0.300, similarity 0.980)")
    ]


def test_minus_one_reorders_without_dropping() -> None:
    hits = _hits(("A", 1.0), ("B", 0.3), ("C", 0.4))
    reorder_only = MmrDedup(MmrOptions(min_marginal_relevance=-1.0))
    kept, collapsed = reorder_only.dedup(hits, _rows(E0, NEAR_E0_98, E2))
    # rel by position = 1, .4, .3 (scores are taken best first): MR(B) = .28 - .294 < MR(C) = .21
    assert _ids(kept) == [10, 12, 11] and collapsed == []


def test_a_higher_threshold_also_drops_hits_of_low_relevance_alone() -> None:
    # min .25: after A, MR(C) = .7*.3 = .21 < .25 with no redundancy at all: dropped.
    hits = _hits(("A", 1.0), ("B", 0.5), ("C", 0.3))
    strict = MmrDedup(MmrOptions(min_marginal_relevance=0.25))
    kept, collapsed = strict.dedup(hits, _rows(E0, [0, 1.0, 0, 0], E2))
    assert _ids(kept) == [10, 11]
    assert [(c.chunk_id, c.kept_chunk_id, c.reason) for c in collapsed] == [
        (12, 10, "mmr 0.210 < 0.25 (relevance 0.300, similarity 0.000)")
    ]


def test_lambda_one_is_the_relevance_order_and_lambda_zero_pure_diversity() -> None:
    hits = _hits(("A", 1.0), ("B", 0.9), ("C", 0.8))
    vectors = _rows(E0, NEAR_E0_98, E2)
    kept, collapsed = MmrDedup(MmrOptions(relevance_weight=1.0)).dedup(hits, vectors)
    assert kept == hits and collapsed == []
    # λ = 0: MR = -max sim. After A: MR(B) = -.98, MR(C) = 0 -> C; then B at -.98 < 0: dropped.
    kept, collapsed = MmrDedup(MmrOptions(relevance_weight=0.0)).dedup(hits, vectors)
    assert _ids(kept) == [10, 12]
    assert [(c.chunk_id, c.kept_chunk_id) for c in collapsed] == [(11, 10)]
    assert collapsed[0].reason.startswith("mmr -0.980 < 0")


def test_identical_text_collapses_and_follows_a_dropped_copy() -> None:
    # B and C have the same text: C is collapsed into B's fate. B: rel .35,
    # MR = .245 - .294 = -.049 < 0 -> dropped into A, so C also points at A.
    hits = _hits(("A", 1.0), ("Dark mode, please", 0.35), ("dark mode,  PLEASE", 0.3))
    vectors = _rows(E0, NEAR_E0_98, [0, 0, 0, 0])
    kept, collapsed = MmrDedup().dedup(hits, vectors)
    assert _ids(kept) == [10]
    assert [(c.chunk_id, c.kept_chunk_id, c.reason) for c in collapsed] == [
        (11, 10, "mmr -0.049 < 0 (relevance 0.350, similarity 0.980)"),
        (12, 10, "identical text"),
    ]


def test_without_vectors_only_identical_text_counts_as_similar() -> None:
    hits = _hits(("alpha", 1.0), ("beta", 0.9), ("Alpha", 0.5), ("gamma", 0.1))
    kept, collapsed = MmrDedup().dedup(hits, None)
    assert _ids(kept) == [10, 11, 13]  # relevance order; nothing else is similar
    assert [(c.chunk_id, c.kept_chunk_id, c.reason) for c in collapsed] == [
        (12, 10, "identical text")
    ]


def test_zero_rows_are_similar_to_nothing_by_vector() -> None:
    hits = _hits(("A", 1.0), ("B", 0.3), ("C", 0.2))
    kept, collapsed = MmrDedup().dedup(hits, _rows(E0, [0, 0, 0, 0], E0))
    # B has no vector: MR = .21. C is a vector copy of A: MR = .14 - .3 = -.16 -> dropped.
    assert _ids(kept) == [10, 11]
    assert [(c.chunk_id, c.kept_chunk_id) for c in collapsed] == [(12, 10)]


def test_vectors_must_have_one_row_per_hit() -> None:
    with pytest.raises(ValueError, match=r"expected shape \(2, dim\)"):
        MmrDedup().dedup(_hits(("a", 1.0), ("b", 0.5)), _rows(E0))


@pytest.mark.parametrize(
    "options", [{"relevance_weight": 1.5}, {"relevance_weight": -0.1},
                {"min_marginal_relevance": -1.5}, {"lambda": 0.5}],
)
def test_options_out_of_range_or_unknown_are_rejected(options: dict[str, float]) -> None:
    with pytest.raises(ValidationError):
        MmrOptions(**options)


def test_selected_in_a_pipeline_and_listed_by_octomem_plugins(data_dir: Path) -> None:
    out = CliRunner().invoke(app, ["plugins"], env={"COLUMNS": "200"}).output
    rows = [row.split()[:3] for row in out.splitlines()]  # kind, name, distribution
    assert ["dedup", "mmr", "octomem"] in rows
    loaded = load_settings(
        overrides={"data_dir": str(data_dir), "pipeline": {"embedder": "hashing", "dedup": "mmr"},
                   "arms": {"mmr": {"relevance_weight": 0.5}}, "retrieval": {"rrf_k": 60}},
        read_user_config=False,
    )
    pipeline = Pipeline(loaded, load_registry())
    try:
        assert pipeline.arms.dedup.name == "mmr" and pipeline.arms.dedup.lam == 0.5
        pipeline.add([
            Document("the deploy script needs staging credentials", id="a"),
            Document("the deploy script needs the staging credentials", id="b"),
            Document("deploy on fridays is forbidden", id="c"),
        ])
        answer = pipeline.search(Query("deploy script staging credentials", top_k=3))
        # Both arms rank a, b, c: RRF scores 2/61, 2/62, 2/63, so rel(b) = .984, rel(c) = .968.
        # Hashing cosines: (a, b) = .970, (a, c) = .178. With λ = .5 after a:
        # MR(b) = .5*.984 - .5*.970 = .007, MR(c) = .5*.968 - .5*.178 = .395 -> c before b.
        vectors = pipeline.arms.semantic.vectors([h.chunk.id for h in answer.hits])
        assert float(vectors[0] @ vectors[2]) == pytest.approx(0.970, abs=1e-3)
        assert [h.chunk.document_id for h in answer.hits] == ["a", "c", "b"]
        assert [h.score for h in answer.hits] == pytest.approx([2 / 61, 2 / 63, 2 / 62])
        assert answer.collapsed == []
    finally:
        pipeline.close()
