"""Contract of the :class:`~octomem.engine.arms.Embedder` Protocol."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ..arms import Embedder
from .base import ArmBuilder, ArmContract

TEXTS = [
    "The deploy script lives in tools/deploy.sh and needs the staging credentials.",
    "short",
    "Users reset their password from the account settings page.",
    "Eggs, flour and milk make a simple pancake batter.",
]

#: Built embedders by (class, name, options): a model loads once per suite, not per test.
_BUILT: dict[tuple[str, str, str], Any] = {}


def assert_unit_rows(vectors: np.ndarray) -> None:
    """Every row (or the one vector) has L2 norm 1."""
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=-1), 1.0, atol=1e-5)


class EmbedderContract(ArmContract):
    """Every embedder: shapes, dtype, unit norm, determinism, batch independence, token
    counts. Name it with ``ARM``. The embedder is built once per suite and name."""

    @pytest.fixture(scope="class", autouse=True)
    @classmethod
    def _release_models(cls) -> Any:
        """Forget the suite's built embedders (and their models) when the class is done."""
        yield
        _BUILT.clear()

    @pytest.fixture
    def embedder(self, octomem_build: ArmBuilder, arm_name: str,
                 tmp_path_factory: pytest.TempPathFactory) -> Any:
        """The embedder under test, built from its spec (cached across the suite's tests)."""
        options = octomem_build.options_for("embedder", arm_name)
        key = (type(self).__qualname__, arm_name, json.dumps(options.model_dump(mode="json")))
        if key not in _BUILT:
            root = tmp_path_factory.mktemp(f"embedder-{arm_name}")
            _BUILT[key] = octomem_build.build("embedder", arm_name, root=root)
        return _BUILT[key]

    def test_implements_the_protocol(self, embedder: Embedder) -> None:
        assert isinstance(embedder, Embedder)
        assert isinstance(embedder.name, str) and embedder.name
        assert isinstance(embedder.model_id, str) and embedder.model_id
        assert isinstance(embedder.dim, int) and embedder.dim > 0
        assert isinstance(embedder.max_tokens, int) and embedder.max_tokens > 0

    def test_model_id_is_stable_across_instances(
        self, embedder: Embedder, octomem_build: ArmBuilder, arm_name: str
    ) -> None:
        again = octomem_build.build("embedder", arm_name, root=Path("."))
        assert again.model_id == embedder.model_id
        assert again.dim == embedder.dim

    def test_embed_documents_shape_dtype_unit_norm(self, embedder: Embedder) -> None:
        vectors = embedder.embed_documents(TEXTS)
        assert type(vectors) is np.ndarray
        assert vectors.shape == (len(TEXTS), embedder.dim)
        assert vectors.dtype == np.float32
        assert np.isfinite(vectors).all()
        assert_unit_rows(vectors)

    def test_embed_query_shape_dtype_unit_norm(self, embedder: Embedder) -> None:
        vector = embedder.embed_query("how do users reset a password?")
        assert type(vector) is np.ndarray
        assert vector.shape == (embedder.dim,)
        assert vector.dtype == np.float32
        assert_unit_rows(vector)

    def test_empty_batch_gives_zero_rows(self, embedder: Embedder) -> None:
        vectors = embedder.embed_documents([])
        assert vectors.shape == (0, embedder.dim)
        assert vectors.dtype == np.float32

    def test_empty_text_still_gives_a_unit_vector(self, embedder: Embedder) -> None:
        assert_unit_rows(embedder.embed_documents([""]))

    def test_deterministic(self, embedder: Embedder) -> None:
        first = embedder.embed_documents(TEXTS)
        second = embedder.embed_documents(TEXTS)
        np.testing.assert_allclose(first, second, atol=1e-6)
        np.testing.assert_allclose(
            embedder.embed_query(TEXTS[2]), embedder.embed_query(TEXTS[2]), atol=1e-6
        )

    def test_rows_follow_input_order_and_do_not_depend_on_the_batch(
        self, embedder: Embedder
    ) -> None:
        batch = embedder.embed_documents(TEXTS)
        for i, text in enumerate(TEXTS):
            alone = embedder.embed_documents([text])[0]
            np.testing.assert_allclose(batch[i], alone, atol=1e-4)

    def test_different_texts_give_different_vectors(self, embedder: Embedder) -> None:
        vectors = embedder.embed_documents([TEXTS[0], TEXTS[3]])
        assert float(vectors[0] @ vectors[1]) < 0.9

    def test_count_tokens(self, embedder: Embedder) -> None:
        counts = embedder.count_tokens(["", "alpha beta gamma", "alpha beta gamma " * 100])
        assert all(type(c) is int for c in counts)
        assert counts[0] == 0
        assert counts[1] >= 3
        assert counts[2] >= 100 * counts[1] - 1
        assert counts[2] > embedder.max_tokens  # such a chunk must be split by the caller
        assert embedder.count_tokens([]) == []
