"""Ingest leaves uncounted the texts whose token ceiling fits, and chunks them the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()


def _documents() -> list[Document]:
    """Texts on each side of MiniLM's 254-token budget, by ceiling and by count, with and
    without titles (a long title halves the budget)."""
    docs = []
    for n in (10, 60, 63, 64, 65, 120, 126, 127, 128, 200, 300, 600):
        text = " ".join(WORDS[i % len(WORDS)] for i in range(n))  # ~5.3 characters a word
        docs.append(Document(text, id=f"w{n}"))
        docs.append(Document(text, id=f"t{n}", title="A short title"))
        docs.append(Document(text, id=f"l{n}", title=" ".join(["heading"] * 200)))
    docs.append(Document("x" * 254, id="c254"))  # ceiling 254: within budget exactly
    docs.append(Document("! " * 255, id="p255"))  # ceiling and count 255: split
    docs.append(Document("  padded text \n", id="pad", title="Short"))
    docs.append(Document("café " * 30, id="accents"))  # ceiling 180: not counted
    docs.append(Document("café " * 60, id="more"))  # ceiling 360: counted (60 tokens)
    docs.append(Document("a short note", id="titled", title="Its own title"))
    return docs


def _chunks(root: Path, ceilings: bool, monkeypatch: pytest.MonkeyPatch
            ) -> tuple[dict[str, list[str]], list[str]]:
    pipeline = Pipeline(load_settings(None, {}), load_registry(), root)
    embedder = pipeline.arms.embedder
    counted: list[str] = []
    original = embedder.count_tokens

    def spy(texts: list[str]) -> list[int]:
        counted.extend(texts)
        return original(texts)

    monkeypatch.setattr(embedder, "count_tokens", spy)
    pipeline._token_counter()
    if not ceilings:
        pipeline._ceilings = None
    docs = _documents()
    pipeline.add(docs, embed=False)
    storage = pipeline.arms.storage
    out = {d.id: [c.text for c in storage.document_chunks(d.id)] for d in docs}
    pipeline.close()
    return out, counted


def test_texts_within_their_ceiling_are_not_counted_and_chunk_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with_ceilings, counted = _chunks(tmp_path / "a", True, monkeypatch)
    without, counted_all = _chunks(tmp_path / "b", False, monkeypatch)
    assert with_ceilings == without
    assert with_ceilings["c254"] == ["x" * 254] and len(with_ceilings["p255"]) == 2
    assert with_ceilings["pad"] == ["padded text"] and len(with_ceilings["w600"]) > 1
    short = " ".join(WORDS[i % len(WORDS)] for i in range(10))
    assert short in counted_all and short not in counted  # ceiling 53: never counted
    assert "x" * 254 not in counted and "! " * 255 in counted and "café " * 60 in counted
    assert "café " * 30 not in counted and with_ceilings["more"] == [("café " * 60).strip()]
    words60 = " ".join(WORDS[i % len(WORDS)] for i in range(60))  # 266 characters, 60 words
    assert words60 in counted_all and words60 not in counted  # refined word by word
    assert "Its own title" not in counted  # its text fits: nor is its title counted
    assert "Its own title" in counted_all and "A short title" in counted
