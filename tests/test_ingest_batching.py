"""Ingest counts the tokens of a transaction's documents in one call, chunking alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from octomem.engine.manager import load_registry
from octomem.engine.pipeline import DOCS_PER_TRANSACTION, Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document


def test_one_count_call_per_batch_and_the_same_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = load_settings(None, {"pipeline": {"embedder": "hashing"},
                                    "arms": {"hashing": {"max_tokens": 8}}})
    pipeline = Pipeline(settings, load_registry(), tmp_path / "store")
    embedder = pipeline.arms.embedder
    calls: list[int] = []
    original = embedder.count_tokens

    def spy(texts: list[str]) -> list[int]:
        calls.append(len(texts))
        return original(texts)

    monkeypatch.setattr(embedder, "count_tokens", spy)
    short = [Document(f"note number {i}", id=f"s{i}") for i in range(DOCS_PER_TRANSACTION)]
    long_text = " ".join(f"word{i}" for i in range(30))  # 30 words: split at 8 per chunk
    report = pipeline.add([*short, Document(long_text, id="long", title="A title")],
                          embed=False)
    # the probe, then one call per batch of whole texts (+ the long text's pieces)
    assert calls[1] == DOCS_PER_TRANSACTION and calls[2] == 2
    assert report.chunks == DOCS_PER_TRANSACTION + 5
    chunks = pipeline.arms.storage.document_chunks("long")
    assert [len(c.text.split()) for c in chunks] == [6, 6, 6, 6, 6]  # budget 8 - title's 2
    assert " ".join(c.text for c in chunks) == long_text
    pipeline.close()
