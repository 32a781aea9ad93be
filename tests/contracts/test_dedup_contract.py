"""Contract suite of the Dedup Protocol (the conformance kit's ``DedupContract``) over every
registered dedup, then ``cosine`` specifics (``mmr`` specifics are in tests/test_mmr_dedup.py)."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from octomem.engine.manager import load_registry
from octomem.engine.testing import DedupContract, registered_names
from octomem.engine.testing.dedup import DIM
from octomem.engine.testing.dedup import basis as _basis
from octomem.engine.testing.dedup import fused_hits as _hits
from octomem.plugins.dedup.cosine import CosineDedup, CosineDedupOptions, normalise_text


def _at_cosine(c: float) -> np.ndarray:
    """A unit vector whose cosine to basis vector 0 is ``c`` (it lies in the 0-1 plane)."""
    row = np.zeros(DIM, dtype=np.float32)
    row[0], row[1] = c, np.sqrt(1.0 - c * c)
    return row


# ---- contract: every registered dedup (the conformance kit's DedupContract) -------------


@pytest.mark.parametrize("arm_name", registered_names("dedup", runnable=True))
class TestDedupContract(DedupContract):
    """Every installed dedup, with default options."""


# ---- cosine specifics -----------------------------------------------------------------

#: The tests below use 0.95 to check the rule; the default (0.99) is checked separately.
LOOSE = CosineDedupOptions(threshold=0.95)


def test_cosine_is_registered_with_its_options_model() -> None:
    spec = load_registry().get("dedup", "cosine")
    assert spec.options_model is CosineDedupOptions
    assert spec.options_model().threshold == 0.99


def test_identical_text_after_case_and_whitespace_normalisation() -> None:
    assert normalise_text("  The  Deploy\tscript\n") == "the deploy script"
    hits = _hits("The deploy script", "other", "  the DEPLOY\n script ")
    kept, collapsed = CosineDedup().dedup(hits, None)
    assert [h.chunk.id for h in kept] == [10, 11]
    assert [(c.chunk_id, c.kept_chunk_id, c.reason) for c in collapsed] == [
        (12, 10, "identical text")
    ]


def test_cosine_at_or_over_threshold_collapses_with_a_reason() -> None:
    hits = _hits("first", "unrelated", "near copy of first")
    vectors = np.stack([_basis(0)[0], _basis(2)[0], _at_cosine(0.973)])
    kept, collapsed = CosineDedup(LOOSE).dedup(hits, vectors)
    assert [(h.chunk.id, h.rank) for h in kept] == [(10, 1), (11, 2)]
    assert [(c.chunk_id, c.kept_chunk_id, c.reason) for c in collapsed] == [
        (12, 10, "cosine 0.973 >= 0.95")
    ]


def test_cosine_below_threshold_is_kept_and_threshold_is_an_option() -> None:
    hits = _hits("first", "related")
    vectors = np.stack([_basis(0)[0], _at_cosine(0.94)])
    assert len(CosineDedup(LOOSE).dedup(hits, vectors)[0]) == 2
    vectors = np.stack([_basis(0)[0], _at_cosine(0.973)])
    strict = CosineDedup(CosineDedupOptions(threshold=0.99))
    assert len(strict.dedup(hits, vectors)[0]) == 2


def test_collapses_into_the_most_similar_kept_hit_not_a_removed_one() -> None:
    hits = _hits("a", "b", "near b", "near the removed one")
    b, near_b = _basis(1)[0], np.array([0, 0.98, 0.199, 0, 0, 0, 0, 0], dtype=np.float32)
    # cos(row3, near_b) = 0.9995 but near_b is removed; cos(row3, b) = 0.90 < 0.95: kept
    row3 = np.array([0, 0.90, 0.436, 0, 0, 0, 0, 0], dtype=np.float32)
    vectors = np.stack([_basis(0)[0], b, near_b, row3])
    kept, collapsed = CosineDedup(LOOSE).dedup(hits, vectors)
    assert [h.chunk.id for h in kept] == [10, 11, 13]
    assert [(c.chunk_id, c.kept_chunk_id) for c in collapsed] == [(12, 11)]
    assert collapsed[0].reason.startswith("cosine 0.98")


def test_zero_rows_take_part_in_the_text_rule_only() -> None:
    hits = _hits("same words", "other", "Same words", "new")
    vectors = np.stack([_basis(0)[0], _basis(1)[0], np.zeros(DIM), np.zeros(DIM)])
    kept, collapsed = CosineDedup().dedup(hits, vectors.astype(np.float32))
    assert [h.chunk.id for h in kept] == [10, 11, 13]
    assert [(c.chunk_id, c.reason) for c in collapsed] == [(12, "identical text")]


def test_renumbers_ranks_and_keeps_scores_and_contributions() -> None:
    hits = _hits("a", "a", "b", "a", "c")
    kept, _ = CosineDedup().dedup(hits, None)
    assert [(h.chunk.id, h.rank, h.score) for h in kept] == [
        (10, 1, 1.0), (12, 2, pytest.approx(0.8)), (14, 3, pytest.approx(0.6))
    ]
    assert kept[1].contributions == hits[2].contributions
    assert hits[2].rank == 3  # inputs are not modified


def test_vectors_must_have_one_row_per_hit() -> None:
    with pytest.raises(ValueError, match=r"expected shape \(2, dim\)"):
        CosineDedup().dedup(_hits("a", "b"), _basis(0, 1, 2))


@pytest.mark.parametrize("threshold", [0.0, -0.5, 1.01])
def test_threshold_out_of_range_is_rejected(threshold: float) -> None:
    with pytest.raises(ValidationError):
        CosineDedupOptions(threshold=threshold)


def test_cosine_keeps_the_input_order() -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(8, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors[6] = vectors[3]
    hits = _hits("a", "b", "a", "c", "d", "B", "e", "f")
    kept, collapsed = CosineDedup().dedup(hits, vectors)
    assert [h.chunk.id for h in kept] == [10, 11, 13, 14, 17]
    assert [(c.chunk_id, c.kept_chunk_id, c.reason[:6]) for c in collapsed] == [
        (12, 10, "identi"), (15, 11, "identi"), (16, 13, "cosine")
    ]
