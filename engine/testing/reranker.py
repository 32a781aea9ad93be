"""Contract of the :class:`~octomem.engine.arms.Reranker` Protocol.

A reranker whose model cannot be loaded with the options given (its ``rerank`` raises
:class:`~octomem.engine.errors.EmbedderUnavailableError`) is skipped with the reason:
give a loadable model through ``octomem_arm_options``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ..arms import Reranker
from ..errors import EmbedderUnavailableError
from .base import ArmBuilder, ArmContract

QUERY = "how do I reset my password"
PASSAGES = [
    "reset your password now",
    "the recipe needs two eggs",
    "recover account credentials",
    "reset your password now",
    "",
]


class RerankerContract(ArmContract):
    """Every reranker: one float32 score per passage in input order, whatever the batch;
    deterministic; nothing in, nothing out. Name it with ``ARM``."""

    @pytest.fixture
    def reranker(self, octomem_build: ArmBuilder, arm_name: str) -> Any:
        """The reranker under test; skipped when its model cannot be loaded."""
        built = octomem_build.build("reranker", arm_name)
        try:
            built.rerank(QUERY, PASSAGES[:1])
        except EmbedderUnavailableError as exc:
            pytest.skip(f"reranker {arm_name!r} cannot load its model with these options: {exc}")
        return built

    def test_implements_the_protocol(self, reranker: Reranker, arm_name: str) -> None:
        assert isinstance(reranker, Reranker)
        assert reranker.name == arm_name

    def test_one_float32_score_per_passage(self, reranker: Reranker) -> None:
        scores = reranker.rerank(QUERY, PASSAGES)
        assert type(scores) is np.ndarray
        assert scores.shape == (len(PASSAGES),) and scores.dtype == np.float32
        assert np.isfinite(scores).all()

    def test_no_passages_gives_no_scores(self, reranker: Reranker) -> None:
        scores = reranker.rerank(QUERY, [])
        assert scores.shape == (0,) and scores.dtype == np.float32

    def test_identical_passages_score_alike_and_calls_are_deterministic(
        self, reranker: Reranker
    ) -> None:
        scores = reranker.rerank(QUERY, PASSAGES)
        assert scores[0] == pytest.approx(scores[3], abs=1e-5)
        np.testing.assert_allclose(reranker.rerank(QUERY, PASSAGES), scores, atol=1e-5)

    def test_scores_follow_input_order_whatever_the_batch(self, reranker: Reranker) -> None:
        together = reranker.rerank(QUERY, PASSAGES)
        np.testing.assert_allclose(reranker.rerank(QUERY, PASSAGES[::-1]), together[::-1],
                                   atol=1e-4)
        alone = np.array([reranker.rerank(QUERY, [p])[0] for p in PASSAGES], dtype=np.float32)
        np.testing.assert_allclose(alone, together, atol=1e-4)
