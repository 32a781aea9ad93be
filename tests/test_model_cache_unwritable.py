"""A model cache folder that cannot be written (trial 17 G10): a read-only home, a sandbox
or a container turned the semantic arm off everywhere (every recall keyword-only, every
statement stored without a vector) although the model ships in the wheel. Now the model
is prepared in a temporary folder of the process's own, removed at exit, with one warning.
Real bundled model, real files."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from cli_run import octomem

from octomem.plugins.fastembed.embedder import FastembedEmbedder, FastembedOptions

pytestmark = pytest.mark.slow

TEXTS = ["Where did Caroline go hiking last summer?", "ok"]


def _unwritable(tmp_path: Path) -> Path:
    """A cache folder no one can create, root included: its parent is a file."""
    (tmp_path / "a-file").write_text("not a folder\n")
    return tmp_path / "a-file" / "cache"


def _own_tmp(tmp_path: Path) -> Path:
    """A temporary folder of the test's own: the machine's /tmp is shared with every other
    process, and a suite running beside this one (another checkout, CI) makes and removes
    its own octomem-model-* there while this test compares what it sees."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    return folder


def test_the_model_runs_as_from_the_cache_when_the_cache_cannot_be_written(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    cached = FastembedEmbedder(FastembedOptions(cache_dir=tmp_path / "cache"))
    want = cached.embed_documents(TEXTS)
    monkeypatch.setattr(tempfile, "tempdir", str(_own_tmp(tmp_path)))
    outside = FastembedEmbedder(FastembedOptions(cache_dir=_unwritable(tmp_path)))
    with caplog.at_level("WARNING"):
        got = outside.embed_documents(TEXTS)
    assert outside.unavailable() is None
    assert np.array_equal(got, want)  # the same bytes of model, the same vectors
    said = [r.getMessage() for r in caplog.records if "cannot be written" in r.getMessage()]
    assert len(said) == 1 and "arms.fastembed.cache_dir" in said[0], said
    made = list(Path(tempfile.gettempdir()).glob("octomem-model-*"))
    assert len(made) == 1 and (made[0].stat().st_mode & 0o777) == 0o700


def test_search_and_add_keep_the_semantic_arm(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    own = _own_tmp(tmp_path)
    cache = ["--set", f'arms.fastembed.cache_dir="{_unwritable(tmp_path)}"']
    added = octomem(project, *cache, "add", "Never push directly to main; open a pull request",
                    "--json", hashing=False, spawn=True, TMPDIR=str(own))
    assert added.json()["embedded"] is True, added.out
    warned = [line for line in added.err.strip().splitlines() if not line.startswith("created ")]
    assert "cannot be written" in added.err and len(warned) == 1, added.err
    found = octomem(project, *cache, "search", "can I push to main?", "--json",
                    hashing=False, spawn=True, TMPDIR=str(own)).json()
    assert found["semantic_available"] and not found.get("arms_unavailable"), found
    assert [h["text"] for h in found["hits"]] == [
        "Never push directly to main; open a pull request"]
    # each process removed its temporary folder when it ended
    assert list(own.glob("octomem-model-*")) == []
