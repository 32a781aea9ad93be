"""The ``expansion`` feature's table of word vectors (:mod:`octomem.plugins.conversation.
word_table`): built from the bundled MiniLM (a short word list, for time), validated on
every open, the same vectors as live embedding, and nothing of a scope's memories in it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from octomem.engine.memory.facade import open_memory
from octomem.engine.types import Document, Query
from octomem.plugins.conversation import ranker as ranker_module
from octomem.plugins.conversation import word_table
from octomem.plugins.conversation.expansion import (
    WordVectors,
    expansion_column,
    expansion_words,
)
from octomem.plugins.conversation.word_table import (
    build_table,
    open_table,
    public_words,
    table_paths,
    words_digest,
)
from octomem.plugins.fastembed.embedder import FastembedEmbedder

WORDS = public_words(["exercises", "yoga", "workout", "weather", "whales", "kitchen",
                      "morning", "back", "documentary", "##ing", "[unused3]", "ab", "the"])
TURNS = ["I finally tried yoga this morning, my back feels great.",
         "The weather has been rainy all week here.",
         "Kickboxing class was a tough workout but I loved it.",
         "We watched a documentary about whales last night."]


class Counting:
    """The real embedder, counting the words it is asked to embed."""

    def __init__(self, embedder: FastembedEmbedder) -> None:
        self.inner, self.dim, self.model_id = embedder, embedder.dim, embedder.model_id
        self.embedded: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.embedded.extend(texts)
        return self.inner.embed_documents(texts)


@pytest.fixture(scope="module")
def embedder() -> FastembedEmbedder:
    return FastembedEmbedder()


def test_the_list_is_the_vocabularys_whole_words(embedder: FastembedEmbedder) -> None:
    assert WORDS == ("back", "documentary", "exercises", "kitchen", "morning", "weather",
                     "whales", "workout", "yoga")
    vocabulary = public_words(embedder.vocabulary())
    assert len(vocabulary) > 20_000 and "yoga" in vocabulary and "kickboxing" not in vocabulary


def test_a_built_table_holds_the_live_vectors(tmp_path: Path, embedder: FastembedEmbedder,
                                              ) -> None:
    table = build_table(embedder, WORDS, tmp_path)
    assert table is not None and table.vectors.shape == (len(WORDS), embedder.dim)
    np.testing.assert_allclose(table.vectors, embedder.embed_documents(list(WORDS)),
                               atol=1e-6)
    assert open_table(tmp_path, embedder.model_id, embedder.dim, WORDS) is not None
    # another model or another list: not this table
    assert open_table(tmp_path, embedder.model_id + "x", embedder.dim, WORDS) is None
    assert open_table(tmp_path, embedder.model_id, embedder.dim, WORDS[1:]) is None


@pytest.mark.parametrize("damage", ["flip", "truncate", "record"])
def test_a_damaged_table_is_not_read_and_is_built_again(
    tmp_path: Path, embedder: FastembedEmbedder, damage: str,
) -> None:
    assert build_table(embedder, WORDS, tmp_path) is not None
    npy, record = table_paths(tmp_path, embedder.model_id, words_digest(WORDS))
    good = npy.read_bytes()
    if damage == "flip":  # a bit of a vector, past the header
        data = bytearray(good)
        data[-7] ^= 0x10
        npy.write_bytes(bytes(data))
    elif damage == "truncate":
        npy.write_bytes(good[: len(good) // 2])
    else:
        record.write_text("{not json", encoding="utf-8")
    assert open_table(tmp_path, embedder.model_id, embedder.dim, WORDS) is None
    counting = Counting(embedder)
    rebuilt = build_table(counting, WORDS, tmp_path)
    assert rebuilt is not None and counting.embedded == list(WORDS)
    assert npy.read_bytes() == good
    assert not list(tmp_path.glob("*.partial.*"))


def test_words_outside_the_list_are_embedded_live_with_the_same_column(
    tmp_path: Path, embedder: FastembedEmbedder,
) -> None:
    table = build_table(embedder, WORDS, tmp_path)
    counting = Counting(embedder)
    with_table = WordVectors(counting, table=table)
    turns = [expansion_words(t) for t in TURNS]
    question = expansion_words("What exercises has John done?")
    column = expansion_column(question, ["john"], turns, with_table, 0.45)
    assert set(counting.embedded) == {w for t in turns for w in t} - set(WORDS) | (
        set(question) - set(WORDS) - {"john"})
    assert "kickboxing" in counting.embedded and "yoga" not in counting.embedded
    live = expansion_column(question, ["john"], turns, WordVectors(embedder), 0.45)
    np.testing.assert_allclose(column, live, rtol=1e-6, atol=1e-9)
    assert column[0] > 0 and column[2] > 0 and column[1] == 0 and column[3] == 0


def test_the_table_holds_nothing_of_the_memories(
    tmp_path: Path, embedder: FastembedEmbedder, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ranker_module, "public_words", lambda vocabulary: WORDS)
    monkeypatch.setattr(ranker_module, "build_table", word_table.build_table)  # conftest's off
    words = tmp_path / "words"
    memory = open_memory(project_root=tmp_path / "project", global_root=tmp_path / "global",
                         overrides={"arms": {"conversation": {"word_table_dir": str(words)}}})
    try:
        pipeline = memory.scopes.require("global", create=True)
        pipeline.add([Document(text=f"John: {t}", id=f"chat-{i}", kind="TURN",
                               metadata={"conversation": "chat", "session": "1",
                                         "position": i, "speaker": "John"})
                      for i, t in enumerate(TURNS)])
        assert pipeline.warm(("reranker",)) == ["conversation"]
        hits = pipeline.search(Query("What exercises has John done?", top_k=4)).hits
        order = [h.chunk.document_id for h in hits]
        # the workout first, yoga above the weather; in these four turns the soft window
        # column (2026-12-03) puts the whales, next to the workout, second
        assert order[0] == "chat-2" and order.index("chat-0") < order.index("chat-1")
    finally:
        memory.close()
    # the same bytes as a table built with no memory at all, and no other file
    alone = build_table(embedder, WORDS, tmp_path / "alone")
    assert alone is not None
    npy, record = table_paths(words, embedder.model_id, words_digest(WORDS))
    assert sorted(p.name for p in words.iterdir()) == sorted(
        [npy.name, record.name, npy.with_suffix(".lock").name])
    twin = table_paths(tmp_path / "alone", embedder.model_id, words_digest(WORDS))[0]
    assert npy.read_bytes() == twin.read_bytes()
    for path in words.iterdir():
        assert b"kickboxing" not in path.read_bytes() and b"John" not in path.read_bytes()


def test_ingest_builds_the_table_once_with_a_progress_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from cli_run import octomem

    monkeypatch.setattr(ranker_module, "public_words", lambda vocabulary: WORDS)
    monkeypatch.setattr(ranker_module, "build_table", word_table.build_table)  # conftest's off
    chat = tmp_path / "chat.jsonl"
    chat.write_text("\n".join(json.dumps({"conversation": "c", "session": "1",
                                          "speaker": "John", "text": t}) for t in TURNS))
    words = tmp_path / "words"
    env = {"OCTOMEM_ARMS__CONVERSATION__WORD_TABLE_DIR": str(words),
           "TTY_COMPATIBLE": "1", "TTY_INTERACTIVE": "0", "NO_COLOR": "1"}  # a terminal's
    # bar (piped, a step shorter than 10 s prints no progress line)
    ran = octomem(tmp_path, "ingest", str(chat), hashing=False, **env)
    assert "word vectors for the reranker" in ran.err
    assert len(list(words.glob("*.npy"))) == 1
    again = octomem(tmp_path, "ingest", str(chat), "--scope", "global", hashing=False, **env)
    assert "word vectors for the reranker" not in again.err  # built: only opened
