"""Contract suite of the Embedder Protocol, run over every registered embedder.

A third-party plugin author runs the same suite: every name that
``load_registry().names("embedder")`` lists is built with its default options.
``fastembed`` uses the real bundled all-MiniLM-L6-v2 int8 model (marked slow; it runs in
the default test command, no network needed).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from octomem.engine.arms import ArmContext, Embedder
from octomem.engine.manager import load_registry

REAL_MODEL_EMBEDDERS = {"fastembed"}
TEXTS = [
    "The deploy script lives in tools/deploy.sh and needs the staging credentials.",
    "short",
    "Users reset their password from the account settings page.",
    "Eggs, flour and milk make a simple pancake batter.",
]


def _params() -> list[object]:
    names = load_registry().names("embedder")
    return [
        pytest.param(n, marks=pytest.mark.slow) if n in REAL_MODEL_EMBEDDERS else n
        for n in names
    ]


@pytest.fixture(scope="module", params=_params())
def embedder(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[object]:
    """One embedder per registered name, built from its spec with default options."""
    spec = load_registry().get("embedder", request.param)
    root: Path = tmp_path_factory.mktemp(f"embedder-{request.param}")
    yield spec.factory(spec.options_model(), ArmContext(root=root))


def _assert_unit_rows(vectors: np.ndarray) -> None:
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=-1), 1.0, atol=1e-5)


def test_implements_the_protocol(embedder: Embedder) -> None:
    assert isinstance(embedder, Embedder)
    assert isinstance(embedder.name, str) and embedder.name
    assert isinstance(embedder.model_id, str) and embedder.model_id
    assert isinstance(embedder.dim, int) and embedder.dim > 0
    assert isinstance(embedder.max_tokens, int) and embedder.max_tokens > 0


def test_model_id_is_stable_across_instances(embedder: Embedder) -> None:
    spec = load_registry().get("embedder", embedder.name)
    again = spec.factory(spec.options_model(), ArmContext(root=Path(".")))
    assert again.model_id == embedder.model_id
    assert again.dim == embedder.dim


def test_embed_documents_shape_dtype_unit_norm(embedder: Embedder) -> None:
    vectors = embedder.embed_documents(TEXTS)
    assert type(vectors) is np.ndarray
    assert vectors.shape == (len(TEXTS), embedder.dim)
    assert vectors.dtype == np.float32
    assert np.isfinite(vectors).all()
    _assert_unit_rows(vectors)


def test_embed_query_shape_dtype_unit_norm(embedder: Embedder) -> None:
    vector = embedder.embed_query("how do users reset a password?")
    assert type(vector) is np.ndarray
    assert vector.shape == (embedder.dim,)
    assert vector.dtype == np.float32
    _assert_unit_rows(vector)


def test_empty_batch_gives_zero_rows(embedder: Embedder) -> None:
    vectors = embedder.embed_documents([])
    assert vectors.shape == (0, embedder.dim)
    assert vectors.dtype == np.float32


def test_empty_text_still_gives_a_unit_vector(embedder: Embedder) -> None:
    _assert_unit_rows(embedder.embed_documents([""]))


def test_deterministic(embedder: Embedder) -> None:
    first = embedder.embed_documents(TEXTS)
    second = embedder.embed_documents(TEXTS)
    np.testing.assert_allclose(first, second, atol=1e-6)
    np.testing.assert_allclose(
        embedder.embed_query(TEXTS[2]), embedder.embed_query(TEXTS[2]), atol=1e-6
    )


def test_rows_follow_input_order_and_do_not_depend_on_the_batch(embedder: Embedder) -> None:
    batch = embedder.embed_documents(TEXTS)
    for i, text in enumerate(TEXTS):
        alone = embedder.embed_documents([text])[0]
        np.testing.assert_allclose(batch[i], alone, atol=1e-4)


def test_different_texts_give_different_vectors(embedder: Embedder) -> None:
    vectors = embedder.embed_documents([TEXTS[0], TEXTS[3]])
    assert float(vectors[0] @ vectors[1]) < 0.9


def test_count_tokens(embedder: Embedder) -> None:
    counts = embedder.count_tokens(["", "alpha beta gamma", "alpha beta gamma " * 100])
    assert all(type(c) is int for c in counts)
    assert counts[0] == 0
    assert counts[1] >= 3
    assert counts[2] >= 100 * counts[1] - 1
    assert counts[2] > embedder.max_tokens  # such a chunk must be split by the caller
    assert embedder.count_tokens([]) == []
