"""The built wheel installs as octomem.engine / octomem.plugins / octomem.mcp_server only."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out),
         str(ROOT)],
        check=True, capture_output=True,
    )
    return next(out.glob("octomem-*.whl"))


@pytest.mark.slow
def test_wheel_has_only_the_octomem_namespace(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.startswith("octomem-")}
    assert top == {"octomem"}
    assert "octomem/plugins/fastembed/minilm_tokenizer/tokenizer.json" in names
    assert "octomem/engine/hookspecs.py" in names
    # the browser view's templates and static files are package data
    assert {"octomem/mcp_server/ui/templates/search.html",
            "octomem/mcp_server/ui/static/ui.js"} <= set(names)
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "octomem = octomem.engine.cli:main" in text
    assert "fts5 = octomem.plugins.fts5" in text  # entry points name the arm packages


@pytest.mark.slow
def test_installed_wheel_imports_from_outside_the_repository(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target),
         str(wheel)],
        check=True, capture_output=True,
    )
    # -S skips site-packages' .pth files (so not the editable install); dependencies come
    # from this environment's site-packages on PYTHONPATH, octomem only from the wheel.
    deps = sysconfig.get_paths()["purelib"]
    code = (
        "import octomem.engine, octomem.plugins.fts5.arm, octomem.mcp_server, importlib.util;"
        "print(octomem.engine.__file__);"
        "print(importlib.util.find_spec('engine'), importlib.util.find_spec('plugins'))"
    )
    env = {**os.environ, "PYTHONPATH": f"{target}{os.pathsep}{deps}"}
    out = subprocess.run(
        [sys.executable, "-S", "-c", code], cwd=tmp_path, env=env,
        check=True, capture_output=True, text=True,
    ).stdout.splitlines()
    assert out[0].startswith(str(target))
    assert out[1] == "None None"


@pytest.mark.slow
def test_optional_plugins_are_not_in_the_octomem_wheel(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if "model2vec" in n or "postgres" in n or n.startswith("plugins/")]
    assert "octomem/engine/testing/__init__.py" in names  # the conformance kit ships with octomem
    assert "octomem/plugins/dedup/mmr.py" in names  # a core arm, unlike octomem-model2vec
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "dedup = octomem.plugins.dedup" in text and "model2vec" not in text
    assert "postgres" not in text
