"""Contract of the Embedder Protocol (the conformance kit's
:class:`~octomem.engine.testing.EmbedderContract`), run over every registered embedder.

A third-party plugin author runs the same suite: every name that
``load_registry().names("embedder")`` lists is built with its default options.
``fastembed`` uses the real bundled all-MiniLM-L6-v2 int8 model (marked slow; it runs in
the default test command, no network needed).
"""

from __future__ import annotations

import pytest

from octomem.engine.testing import EmbedderContract, registered_names

REAL_MODEL_EMBEDDERS = {"fastembed"}


def _params() -> list[object]:
    return [
        pytest.param(n, marks=pytest.mark.slow) if n in REAL_MODEL_EMBEDDERS else n
        for n in registered_names("embedder", runnable=True)
    ]


@pytest.mark.parametrize("arm_name", _params())
class TestEmbedderContract(EmbedderContract):
    """Every installed embedder, with default options."""
