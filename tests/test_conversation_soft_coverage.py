"""The ``conversation`` reranker's soft coverage columns (``soft_cov``, ``soft_win_cov``,
``soft_session_cov``): each question word's best match among a turn's words, the word
itself 1, IDF-weighted, in the turn, its window and its session. A fake embedder for the
arithmetic; a real SQLite store, the fts5 and sqlite-vec arms and the bundled MiniLM for
the rest."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from word_fakes import Words

from octomem.engine.memory.facade import open_memory
from octomem.engine.types import Document
from octomem.plugins.conversation.expansion import WordVectors, word_columns
from octomem.plugins.conversation.features import (
    FEATURES,
    neighbours,
    soft_coverage,
)


def test_each_question_words_best_match_is_1_for_the_word_itself() -> None:
    words = Words({"exercises": (1, 0, 0), "yoga": (0.8, 0.6, 0), "exercise": (1, 0, 0),
                   "john": (0.6, 0, 0.8), "pasta": (0, 1, 0)})
    turns = [("yoga",), ("exercises", "yoga"), ("exercise",), ("pasta",), ()]
    column, best = word_columns(("exercises", "john"), ["john"], turns, WordVectors(words), 0.5)
    assert best.shape == (5, 1)  # the speaker's name is no question word
    # "exercise" has the same vector here, so 1 too; a word of the same fold is not
    # counted as the word itself (its own cosine decides)
    assert best[:, 0] == pytest.approx([0.8, 1.0, 1.0, 0.0, 0.0], abs=1e-6)
    # the expansion column is as before: the question's own word (or its fold) is none
    assert column[1] == pytest.approx(column[0]) and column[2] > 0 and column[3] == 0
    empty_column, empty = word_columns(("john",), ["john"], turns, WordVectors(words))
    assert empty.shape == (5, 0) and not empty_column.any()


def test_the_columns_weigh_words_by_idf_in_the_turn_its_window_and_its_session() -> None:
    # two question words: "rare" held by one candidate itself, "common" by three
    best = np.array([[1.0, 1.0], [0.5, 1.0], [0.2, 1.0], [0.0, 0.3]])
    group = np.array([0, 0, 0, 1])
    position = np.array([0, 1, 5, 0])
    prev, nxt = neighbours(group, position)
    out = soft_coverage(best, group, prev, nxt)
    idf = np.log((4 - np.array([1, 3]) + 0.5) / (np.array([1, 3]) + 0.5))
    idf = np.maximum(idf, 0.01)
    idf /= idf.sum()
    assert out[:, 0] == pytest.approx(best @ idf)
    assert out[1, 1] == pytest.approx(np.array([1.0, 1.0]) @ idf)  # its previous turn's
    assert out[2, 1] == pytest.approx(out[2, 0])  # position 5: no neighbour among them
    assert out[:3, 2] == pytest.approx([np.array([1.0, 1.0]) @ idf] * 3)  # session 0's best
    assert out[3, 2] == pytest.approx(out[3, 0])
    assert not soft_coverage(None, group, prev, nxt).any()
    assert not soft_coverage(np.zeros((4, 0)), group, prev, nxt).any()


TURNS = [
    ("John", "I finally tried yoga this morning, my back feels great."),
    ("Maria", "The weather has been rainy all week here."),
    ("John", "My cousin started a new job at the hospital."),
    ("Maria", "We watched a documentary about whales last night."),
]


def test_a_real_store_gives_the_columns_with_the_bundled_model(tmp_path: Path) -> None:
    memory = open_memory(project_root=tmp_path / "project", global_root=tmp_path / "global")
    try:
        pipeline = memory.scopes.require("global", create=True)
        pipeline.add([
            Document(text=f"{s}: {t}", id=f"chat-{i}", kind="TURN",
                     metadata={"conversation": "chat", "session": "1", "position": i,
                               "speaker": s})
            for i, (s, t) in enumerate(TURNS)])
        reranker = pipeline.arms.reranker
        chunks = list(pipeline.arms.storage.iter_chunks())
        facts = [reranker.known(c) for c in chunks]
        _, best = reranker.expansion("What exercises has John done?", ["john", "maria"], facts)
        assert best is not None and best.shape == (4, 1)
        by_id = dict(zip([c.document_id for c in chunks], best[:, 0], strict=True))
        # "yoga" means "exercises" more than any word of the weather or the whales
        assert by_id["chat-0"] > max(by_id["chat-1"], by_id["chat-3"])
        assert FEATURES[-3:] == ("soft_cov", "soft_win_cov", "soft_session_cov")
    finally:
        memory.close()


def test_soft_coverage_off_leaves_the_columns_at_0(tmp_path: Path) -> None:
    memory = open_memory(project_root=tmp_path / "project", global_root=tmp_path / "global",
                         overrides={"arms": {"conversation": {"soft_coverage": False}}})
    try:
        reranker = memory.scopes.require("global", create=True).arms.reranker
        column, soft = reranker.expansion("What exercises has John done?", [], [])
        assert soft is None and column is not None
    finally:
        memory.close()
