"""What a bench smoke run shows on the console (trial 3, finding 19): no numba warning
about ranx's internals, a keyword-only run's storing step says how its text was chunked
(not "fastembed chunks"), the first evaluation says numba compiles ranx once, and
``bench --help`` names no checkout-specific folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from octomem.benchmarks.metrics import COMPILED_MARKERS, ranx_compiled
from octomem.engine.cli import app


def test_numba_type_safety_warnings_never_reach_the_console() -> None:
    code = ("import warnings; import octomem.benchmarks.metrics; "
            "from numba.core.errors import NumbaTypeSafetyWarning; "
            "warnings.warn('unsafe cast from uint64 to int64', NumbaTypeSafetyWarning); "
            "warnings.warn('this one shows', UserWarning)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert "unsafe cast" not in done.stderr and "this one shows" in done.stderr


def test_ranx_compiled_looks_for_numbas_cache_files(tmp_path: Path) -> None:
    assert not ranx_compiled(tmp_path)
    for sub, prefix in COMPILED_MARKERS:
        cache = tmp_path / sub / "__pycache__"
        cache.mkdir(parents=True)
        (cache / f"{prefix}12.py311.nbi").write_bytes(b"")
        assert ranx_compiled(tmp_path) == (sub == COMPILED_MARKERS[-1][0])


def test_ranx_compiled_looks_only_in_numba_cache_dir_when_set(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """numba reads its cache from ``NUMBA_CACHE_DIR`` alone when that is set: ranx's own
    cache does not spare the compile (a first run there compiled for 12:56 min at load
    12-17 with no word of it)."""
    for sub, prefix in COMPILED_MARKERS:
        (tmp_path / "ranx" / sub / "__pycache__").mkdir(parents=True)
        (tmp_path / "ranx" / sub / "__pycache__" / f"{prefix}12.py311.nbi").write_bytes(b"")
    assert ranx_compiled(tmp_path / "ranx")
    (tmp_path / "numba").mkdir()
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    assert not ranx_compiled(tmp_path / "ranx")
    for sub, prefix in COMPILED_MARKERS:
        (tmp_path / "numba" / sub).mkdir()
        (tmp_path / "numba" / sub / f"{prefix}12.py311.nbi").write_bytes(b"")
    assert ranx_compiled(tmp_path / "ranx")


def test_a_keyword_only_run_says_how_it_chunked_and_help_names_no_folder(
        tmp_path: Path) -> None:
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(
        json.dumps({"_id": f"d{i}", "title": f"Doc {i}", "text": f"river number {i}"}) + "\n"
        for i in range(6)), encoding="utf-8")
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "q0", "text": "river 1"}) + "\n",
                                          encoding="utf-8")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq0\td1\t1\n",
                                               encoding="utf-8")
    compiled = ranx_compiled()  # before the run: a first run leaves numba's cache behind
    result = CliRunner().invoke(app, ["--set", "pipeline.embedder=hashing", "bench",
                                      str(folder), "--combo", "kw=fts5", "--cache-dir",
                                      str(tmp_path / "cache"), "--out", str(tmp_path / "out")],
                                env={"COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    assert "storing beir (chunks sized for the hashing tokenizer): 6/6" in result.output
    assert "fastembed chunks" not in result.output and "hashing chunks" not in result.output
    assert "NumbaTypeSafetyWarning" not in result.output
    evaluating = next(line for line in result.output.splitlines()
                      if line.startswith("evaluating 1 rows"))
    assert ("numba compiles ranx's code" in evaluating) == (not compiled)
    text = CliRunner().invoke(app, ["bench", "--help"], env={"COLUMNS": "200"}).output
    assert "shared/data" not in text and "see docs/benchmarks.md" in text
