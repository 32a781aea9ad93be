"""A damaged cached model file is built again, once (trial 12, F7): a truncated
``~/.cache/octomem/models/minilm-int8-*-unpadded.onnx`` made every search fail with
onnxruntime's ``INVALID_PROTOBUF`` for good, while the README says the cache is safe to
delete and rebuilt on next use. Real bundled model, real files."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from cli_run import octomem

from octomem.plugins.fastembed.embedder import FastembedEmbedder, FastembedOptions

pytestmark = pytest.mark.slow

TEXTS = ["Where did Caroline go hiking last summer?", "ok"]


def _truncate(path: Path, size: int = 1_000_000) -> None:
    with path.open("r+b") as f:
        f.truncate(min(size, path.stat().st_size // 2))


@pytest.mark.parametrize("requantize", [True, False])
def test_a_truncated_cached_copy_is_built_again(tmp_path: Path, requantize: bool) -> None:
    first = FastembedEmbedder(FastembedOptions(cache_dir=tmp_path, requantize=requantize))
    want = first.embed_documents(TEXTS)
    copies = sorted((tmp_path / "models").glob("*.onnx"))
    sizes = {p: p.stat().st_size for p in copies}
    for path in copies:  # every cached file damaged (the prepared copy and its source)
        _truncate(path)
    again = FastembedEmbedder(FastembedOptions(cache_dir=tmp_path, requantize=requantize))
    assert np.array_equal(again.embed_documents(TEXTS), want)
    assert again.unavailable() is None
    assert {p: p.stat().st_size for p in copies} == sizes  # built again, whole


def test_search_after_the_cache_file_was_damaged(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    octomem(project, "add", "The upload parts are 8 MB each", hashing=False, spawn=True, **env)
    models = tmp_path / "cache" / "octomem" / "models"
    damaged = sorted(models.glob("*-unpadded.onnx"))
    assert damaged, os.listdir(models)
    _truncate(damaged[0])
    status = octomem(project, "status", "--json", hashing=False, spawn=True, **env).json()
    assert status["scopes"]["local"]["semantic_available"] is True
    found = octomem(project, "search", "how large is each part of an upload", "--json",
                    hashing=False, spawn=True, **env)
    assert found.err.strip().endswith("it is deleted and built again"), found.err  # one line
    assert len(found.err.strip().splitlines()) == 1, found.err
    answer = found.json()
    assert not answer.get("arms_unavailable") and answer["semantic_available"], answer
    assert [h["text"] for h in answer["hits"]] == ["The upload parts are 8 MB each"]


def test_a_failed_import_deletes_no_cached_copy(tmp_path: Path) -> None:
    """Trial 15 F10: Ctrl-C inside onnxruntime's import left "ImportError: initialization
    failed", taken for a damaged cache file: both cached models were deleted (an 18 s
    rebuild on the next search). Only the file's own failure deletes it."""
    from octomem.plugins.fastembed.graph import open_rebuilding

    cached = [tmp_path / "prepared.onnx", tmp_path / "requantized.onnx"]
    for copy in cached:
        copy.write_bytes(b"model bytes")
    calls = []

    def broken_import(path: Path, optimize: bool) -> None:
        calls.append(path)
        raise ImportError("initialization failed")

    with pytest.raises(ImportError, match="initialization failed"):
        open_rebuilding(lambda: (cached[0], True), broken_import, cached)
    assert calls == [cached[0]]  # not built again
    assert [p.read_bytes() for p in cached] == [b"model bytes", b"model bytes"]
