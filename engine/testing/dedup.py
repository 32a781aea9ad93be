"""Contract of the :class:`~octomem.engine.arms.Dedup` Protocol."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ..arms import Dedup
from ..types import Chunk, FusedHit, Hit
from .base import ArmBuilder, ArmContract

DIM = 8


def fused_hits(*texts: str) -> list[FusedHit]:
    """Fused hits with chunk ids 10, 11, ... and descending scores, ranks 1..n."""
    return [
        FusedHit(
            chunk=Chunk(document_id=f"d{i}", ordinal=0, text=t, id=10 + i),
            score=1.0 - 0.1 * i,
            rank=i + 1,
            contributions={"fts5": Hit(10 + i, 5.0 - i, i + 1, "fts5")},
        )
        for i, t in enumerate(texts)
    ]


def basis(*indices: int) -> np.ndarray:
    """Rows that are one-hot unit vectors at the given indices (orthogonal when distinct)."""
    return np.eye(DIM, dtype=np.float32)[list(indices)]


def check_partition(hits: list[FusedHit], kept: list[FusedHit], collapsed: list[Any]) -> None:
    """Kept and collapsed split the input; the first hit stays first; ranks are 1..n.

    A collapsing dedup keeps the input order, a diversifying one (MMR) may reorder the
    rest: the order of the others is checked by each arm's own tests.
    """
    ids = [h.chunk.id for h in hits]
    kept_ids = [h.chunk.id for h in kept]
    assert sorted(kept_ids + [c.chunk_id for c in collapsed]) == sorted(ids)
    assert kept_ids[:1] == ids[:1]
    assert [h.rank for h in kept] == list(range(1, len(kept) + 1))
    by_id = {h.chunk.id: h for h in hits}
    assert all(h.score == by_id[h.chunk.id].score for h in kept)
    assert all(h.contributions == by_id[h.chunk.id].contributions for h in kept)
    assert all(c.kept_chunk_id in set(kept_ids) for c in collapsed)
    assert all(isinstance(c.reason, str) and c.reason for c in collapsed)


class DedupContract(ArmContract):
    """Every dedup: nothing in, nothing out; distinct hits kept in order; an exact repeat
    collapsed into the first; kept and collapsed always partition the input. Name it
    with ``ARM``."""

    @pytest.fixture
    def dedup(self, octomem_build: ArmBuilder, arm_name: str) -> Any:
        """The dedup arm under test, built with its options."""
        return octomem_build.build("dedup", arm_name)

    def test_implements_the_protocol(self, dedup: Dedup) -> None:
        assert isinstance(dedup, Dedup)
        assert isinstance(dedup.name, str) and dedup.name

    def test_no_hits(self, dedup: Dedup) -> None:
        assert dedup.dedup([], None) == ([], [])
        assert dedup.dedup([], np.zeros((0, DIM), dtype=np.float32)) == ([], [])

    def test_distinct_hits_are_all_kept_in_order(self, dedup: Dedup) -> None:
        hits = fused_hits("alpha", "beta", "gamma")
        kept, collapsed = dedup.dedup(hits, basis(0, 1, 2))
        assert [h.chunk.id for h in kept] == [10, 11, 12]
        assert collapsed == []
        assert kept == hits  # nothing to renumber: scores, contributions, ranks unchanged

    def test_an_exact_repeat_collapses_into_the_first(self, dedup: Dedup) -> None:
        hits = fused_hits("alpha", "beta", "alpha")
        kept, collapsed = dedup.dedup(hits, basis(0, 1, 0))
        assert [h.chunk.id for h in kept] == [10, 11]
        assert [(c.chunk_id, c.kept_chunk_id) for c in collapsed] == [(12, 10)]

    @pytest.mark.parametrize("with_vectors", [True, False])
    def test_partition_with_random_vectors_or_none(self, dedup: Dedup, with_vectors: bool) -> None:
        rng = np.random.default_rng(7)
        texts = ["a", "b", "a", "c", "d", "B", "e", "f"]
        vectors = rng.normal(size=(len(texts), DIM)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        vectors[6] = vectors[3]  # a semantic repeat with different text
        hits = fused_hits(*texts)
        kept, collapsed = dedup.dedup(hits, vectors if with_vectors else None)
        check_partition(hits, kept, collapsed)

    def test_zero_rows_are_accepted(self, dedup: Dedup) -> None:
        hits = fused_hits("alpha", "beta", "gamma")
        vectors = basis(0, 1, 2)
        vectors[1] = 0.0
        kept, collapsed = dedup.dedup(hits, vectors)
        check_partition(hits, kept, collapsed)
        assert [h.chunk.id for h in kept] == [10, 11, 12]
