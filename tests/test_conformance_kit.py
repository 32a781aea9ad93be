"""The conformance kit (``octomem.engine.testing``) as a plugin author uses it: the guide's
example embedder passes it, a broken arm fails it, missing options skip with the reason."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from octomem.engine import testing
from octomem.engine.arms import ARM_KINDS

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "plugins.md"

CONFTEST = """
import pytest
from octomem.engine.manager import load_registry
import {module}

@pytest.fixture
def octomem_registry():
    return load_registry(extra_plugins=[{module}])
"""


def _guide_block(marker: str) -> str:
    """Return the fenced python block of docs/plugins.md that starts with ``marker``."""
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.S)
    return next(b for b in blocks if b.startswith(marker))


def _run_pytest(folder: Path) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(folder)],
        cwd=folder, capture_output=True, text=True, timeout=300,
    )
    return result.stdout + result.stderr


def _plugin(tmp_path: Path, source: str, tests: str, module: str = "my_embedder") -> Path:
    (tmp_path / f"{module}.py").write_text(source)
    (tmp_path / "conftest.py").write_text(CONFTEST.format(module=module))
    (tmp_path / "test_conformance.py").write_text(textwrap.dedent(tests))
    return tmp_path


def test_every_arm_kind_has_a_suite() -> None:
    suites = {
        "storage": testing.StorageContract, "keyword": testing.KeywordContract,
        "embedder": testing.EmbedderContract, "semantic": testing.SemanticContract,
        "reranker": testing.RerankerContract, "dedup": testing.DedupContract,
    }
    assert set(suites) == set(ARM_KINDS)
    assert all(issubclass(s, testing.ArmContract) for s in suites.values())
    assert issubclass(testing.StorageSuite, testing.HistoryContract)
    assert issubclass(testing.KeywordSuite, testing.ValidityContract)


@pytest.mark.slow
def test_the_guide_example_embedder_passes_the_kit(tmp_path: Path) -> None:
    folder = _plugin(tmp_path, _guide_block("# my_embedder.py"),
                     _guide_block("# tests/test_conformance.py"))
    out = _run_pytest(folder)
    assert re.search(r"\b10 passed\b", out) and "failed" not in out, out


@pytest.mark.slow
def test_a_broken_embedder_fails_the_kit(tmp_path: Path) -> None:
    broken = _guide_block("# my_embedder.py").replace(
        "return out / np.linalg.norm(out, axis=1, keepdims=True)", "return out")  # not unit norm
    folder = _plugin(tmp_path, broken, _guide_block("# tests/test_conformance.py"))
    out = _run_pytest(folder)
    assert "failed" in out and "test_embed_documents_shape_dtype_unit_norm" in out, out


@pytest.mark.slow
def test_an_arm_missing_a_required_option_is_skipped_with_the_reason(tmp_path: Path) -> None:
    needs_option = _guide_block("# my_embedder.py").replace("    dim: int = 64", "    dim: int")
    folder = _plugin(tmp_path, needs_option, _guide_block("# tests/test_conformance.py"))
    out = _run_pytest(folder)
    assert "10 skipped" in out and "needs options ['dim']" in out, out
    (folder / "conftest.py").write_text(
        CONFTEST.format(module="my_embedder")
        + "\n@pytest.fixture\ndef octomem_arm_options():\n    return {'wordhash': {'dim': 16}}\n")
    assert "10 passed" in _run_pytest(folder)
