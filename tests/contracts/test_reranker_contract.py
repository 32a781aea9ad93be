"""Contract of the Reranker Protocol (the conformance kit's
:class:`~octomem.engine.testing.RerankerContract`), run over every registered reranker.

No PyPI package ships cross-encoder weights, so ``cross-encoder`` is given a tiny ONNX
cross-encoder that tests/test_cross_encoder.py builds; a reranker that cannot load a
model with its options is skipped by the kit, with the reason.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from octomem.engine.testing import RerankerContract, registered_names


@pytest.fixture
def octomem_arm_options(tmp_path: Path) -> dict[str, dict[str, Any]]:
    """The tiny cross-encoder of tests/test_cross_encoder.py for ``cross-encoder``."""
    tiny = pytest.importorskip("test_cross_encoder")  # tests/ is on sys.path (rootdir conftest)
    folder = tmp_path / "tiny-cross-encoder"
    tiny._write_tokenizer(folder)
    tiny._write_cross_encoder(folder)
    return {"cross-encoder": {"model_path": str(folder), "threads": 1}}


@pytest.mark.parametrize("arm_name", registered_names("reranker", runnable=True))
class TestRerankerContract(RerankerContract):
    """Every installed reranker."""
