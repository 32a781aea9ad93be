"""The ``conversation`` reranker's ``expansion`` feature: a turn's words that mean the
question's words ("yoga" for "exercises"). A fake embedder for the arithmetic; a real
SQLite store, the fts5 and sqlite-vec arms and the bundled MiniLM for the rest."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from word_fakes import Words

from octomem.engine.memory.facade import open_memory
from octomem.engine.types import Document, Query
from octomem.plugins.conversation.expansion import (
    WordVectors,
    expansion_column,
    expansion_words,
)
from octomem.plugins.conversation.features import FEATURES


def test_expansion_words_are_the_typed_content_words() -> None:
    assert expansion_words("What exercises has John done? Yoga, yoga and 3 km of it") == (
        "exercises", "john", "yoga")


def test_the_column_sums_each_question_words_best_expansion_weighted_by_idf() -> None:
    # "exercises" ~ "yoga" (cos 0.8) and ~ "stretching" (0.6); "john" is a speaker
    words = Words({"exercises": (1, 0, 0), "yoga": (0.8, 0.6, 0), "stretching": (0.6, 0.8, 0),
                   "john": (0.6, 0, 0.8), "exercise": (1, 0, 0)})
    turns = [("yoga", "stretching"), ("stretching",), ("exercises",), ("weather",), (),
             ("exercise",)]
    col = expansion_column(("exercises", "john"), ["john"], turns, WordVectors(words), 0.5)
    n, idf = 6, (lambda df: np.log((6 - df + 0.5) / (df + 0.5)))
    assert col[0] == pytest.approx(max(0.8 * idf(1), 0.6 * idf(2)))  # one per question word
    assert col[1] == pytest.approx(0.6 * idf(2))
    # the question's own word is no expansion, nor is a speaker's name expanded ("john"
    # would reach "exercises" at 0.6); a word below the threshold and a turn without words
    # get 0; another inflection the light fold leaves apart ("exercise") counts
    assert col[2] == 0 and col[3] == 0 and col[4] == 0 and n == len(col)
    assert col[5] == pytest.approx(idf(1))
    assert expansion_column(("exercises",), [], turns, WordVectors(words), 0.7)[1] == 0


def test_word_vectors_embed_each_word_once() -> None:
    words = Words({})
    vectors = WordVectors(words, capacity=3)
    rows, matrix, keys, spelt = vectors.rows(["a", "b", "a"], ["b", "zz"])
    assert rows.tolist() == [0, 1, 0] and matrix.shape == (2, 3) and keys.shape == (2, 2)
    assert spelt == [keys[1, 0], -1]
    vectors.rows(["b", "c"])
    assert words.embedded == ["a", "b", "c"]
    rows, matrix, _, _ = vectors.rows(["d"])  # past capacity: every row goes
    assert rows.tolist() == [0] and matrix.shape == (1, 3)
    vectors.rows(["a"])
    assert words.embedded == ["a", "b", "c", "d", "a"]



def test_grouped_rows_are_one_rows_call_and_dropped_with_the_rows() -> None:
    """A candidate's kept rows are the ones rows() gives its words, and the kept rows go
    when the words' rows go (past capacity), so they never point at another word."""
    words = Words({})
    vectors = WordVectors(words, capacity=4)
    first, second = ("a", "b"), ("b", "c")
    asked, (flat,), matrix, _, spelt = vectors.grouped_rows(["q"], ["q", "zz"], [first, second])
    assert words.embedded == ["a", "b", "c", "q"]  # one batch, as rows() would embed them
    assert asked.tolist() == [3] and flat.tolist() == [0, 1, 1, 2] and spelt[1] == -1
    again, (same, empty), _, _, _ = vectors.grouped_rows(["q"], [], [second, first], [])
    assert words.embedded == ["a", "b", "c", "q"] and same.tolist() == [1, 2, 0, 1]
    assert again.tolist() == [3] and empty.tolist() == []
    # past capacity: every row goes, the kept tuples too; rows are those of a fresh start
    _, (flat,), matrix, _, _ = vectors.grouped_rows(["d"], [], [first])
    assert words.embedded == ["a", "b", "c", "q", "a", "b", "d"]
    assert flat.tolist() == [0, 1] and matrix.shape == (3, 3)
    fresh = WordVectors(Words({}), capacity=4)
    assert fresh.rows(["d", "a", "b"])[0].tolist() == [2, 0, 1]

TURNS = [
    ("John", "I finally tried yoga this morning, my back feels great."),
    ("Maria", "The weather has been rainy all week here."),
    ("John", "My cousin started a new job at the hospital."),
    ("Maria", "We watched a documentary about whales last night."),
    ("John", "Kickboxing class was a tough workout but I loved it."),
    ("Maria", "I am thinking of repainting the kitchen blue."),
]


@pytest.mark.parametrize("embedder", ["fastembed", "hashing"])
def test_a_real_store_scores_the_turns_that_name_an_instance(
    tmp_path: Path, embedder: str,
) -> None:
    memory = open_memory(project_root=tmp_path / "project", global_root=tmp_path / "global",
                         overrides={"pipeline": {"embedder": embedder}})
    try:
        pipeline = memory.scopes.require("global", create=True)
        pipeline.add([
            Document(text=f"{s}: {t}", id=f"chat-{i}", kind="TURN",
                     metadata={"conversation": "chat", "session": "1", "position": i,
                               "speaker": s})
            for i, (s, t) in enumerate(TURNS)])
        reranker = pipeline.arms.reranker
        chunks = [c for c in pipeline.arms.storage.iter_chunks()]
        facts = [reranker.known(c) for c in chunks]
        column, soft = reranker.expansion("What exercises has John done?", ["john", "maria"],
                                          facts)
        if embedder == "hashing":  # another embedder's cosines: the feature is off
            assert column is None and soft is None
            return
        assert column is not None
        by_id = dict(zip([c.document_id for c in chunks], column, strict=True))
        assert by_id["chat-0"] > 0 and by_id["chat-4"] > 0  # yoga; workout (kickboxing alone: 0.39)
        assert by_id["chat-1"] == 0 and by_id["chat-3"] == 0 and by_id["chat-5"] == 0
        hits = pipeline.search(Query("What exercises has John done?", top_k=10)).hits
        assert {h.chunk.document_id for h in hits[:2]} == {"chat-0", "chat-4"}
        assert FEATURES[12] == "expansion"
    finally:
        memory.close()


def test_expansion_tau_1_turns_the_feature_off(tmp_path: Path) -> None:
    memory = open_memory(project_root=tmp_path / "project", global_root=tmp_path / "global",
                         overrides={"arms": {"conversation": {"expansion_tau": 1.0}}})
    try:
        reranker = memory.scopes.require("global", create=True).arms.reranker
        column, soft = reranker.expansion("What exercises has John done?", [], [])
        assert column is None and soft is not None  # the soft columns stay on
    finally:
        memory.close()
