"""An assistant's turn asked about the user's own life (``assistant_aside`` in
``engine/relevance.json``): the cue, the weight, its choice by
``benchmarks/fit_turn_relevance.py``, and recall over a real SQLite store with the
packaged MiniLM."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from octomem.benchmarks.fit_turn_relevance import Answer, fit, shares
from octomem.engine.memory.facade import open_memory
from octomem.engine.relevance import about_asker, aside, relevance_of, shipped_model
from octomem.engine.types import Document


@pytest.mark.parametrize(("query", "expected"), [
    ("How many playlists do I have on Spotify?", True),
    ("Where am I planning to stay for my birthday trip to Hawaii?", True),
    ("What did you tell me about my Spotify playlists?", False),  # addresses the assistant
    ("Can you remind me where I stayed?", False),
    ("Why did the uploads fail?", False),  # about the subject matter, not the asker
    ("What did Ana say about Lisbon?", False),
])
def test_a_question_about_its_asker_that_does_not_address_the_assistant(
    query: str, expected: bool,
) -> None:
    assert about_asker(query) is expected


def test_only_an_assistants_turn_is_aside() -> None:
    query = "How many playlists do I have on Spotify?"
    assert aside(query, {"role": "assistant"})
    assert not aside(query, {"role": "user"})
    assert not aside(query, {})  # a fact, a document's chunk
    assert not aside("Why did the uploads fail?", {"role": "assistant"})


def test_the_shipped_weight_lowers_an_asides_odds() -> None:
    model = shipped_model()
    assert model.aside < 0
    plain = model.probability(0.5, 0.5)
    lowered = model.probability(0.5, 0.5, aside=True)
    odds = lambda p: p / (1 - p)  # noqa: E731
    assert odds(lowered) / odds(plain) == pytest.approx(math.exp(model.aside))
    # keyword-only weights (no cosine) do not use it
    assert model.probability(None, 0.5, aside=True) == model.probability(None, 0.5)
    text = "Spotify playlists are easy to share with friends."
    rel = relevance_of("How many playlists do I have on Spotify?", text, 0.5, 0.028,
                       embedder=model.embedder, aside=True)
    assert rel.aside and rel.probability == pytest.approx(
        model.probability(0.5, rel.coverage, aside=True))


def _set(own: list[float], other: list[float], other_aside: bool) -> list[Answer]:
    """Own answers pass through a user's turn; foreign ones through their best hit, an
    assistant's turn (``other_aside``) or a user's."""
    out = [Answer(True, True, np.array([z, z - 3.0]), 0, np.array([False, True]))
           for z in own]
    out += [Answer(False, False, np.array([z, z - 4.0]), 0, np.array([other_aside, False]))
            for z in other]
    return out


def test_an_aside_weight_is_chosen_when_foreign_answers_pass_through_assistants() -> None:
    own = list(np.linspace(-3.0, -1.0, 20))
    other = list(np.linspace(-3.2, -1.2, 40))
    sets = {"a": _set(own, other, True)}
    result = fit(sets)
    assert result["assistant_aside"] < 0 and result["unheard"] == 0.0
    kept, empty = shares(sets["a"], result["unheard"], result["floor"],
                         result["assistant_aside"])
    assert kept >= 0.95 and empty >= 0.9
    assert result["per_set"]["a"] == {"kept_own": round(kept, 4),
                                      "abstained_other": round(empty, 4),
                                      "own_questions": 20, "other_questions": 40}
    # the same answers through a user's turn: nothing to gain, the weight stays 0
    assert fit({"a": _set(own, other, False)})["assistant_aside"] == 0.0


@pytest.mark.slow
def test_recall_lowers_an_assistants_turn_only_for_a_question_about_the_user(
    tmp_path: Path,
) -> None:
    memory = open_memory(overrides={  # the packaged MiniLM: the cosines the weights know
        "data_dir": str(tmp_path / "data"), "retrieval": {"relevance_floor": 0.0,
                                                          "relative_floor": 0.0}},
        project_root=tmp_path)
    try:
        pipeline = memory.scopes.require("global", create=True)
        chat = [("user", "Can you suggest some music for a long drive?"),
                ("assistant", "Spotify has great road trip playlists; make one with upbeat "
                              "songs and share your playlists with friends.")]
        pipeline.add([
            Document(text=f"{role}: {text}", id=f"chat-{i}", kind="TURN",
                     metadata={"conversation": "chat", "session": "1", "position": i,
                               "speaker": role, "role": role})
            for i, (role, text) in enumerate(chat)])
        model = shipped_model()

        def reply(question: str):  # type: ignore[no-untyped-def]
            hits = memory.recall(question, top_k=2).hits
            return next(h.relevance for h in hits if h.chunk.document_id == "chat-1")

        mine = reply("How many playlists do I have on Spotify?")
        theirs = reply("How do Spotify playlists get shared?")
        assert mine.aside and not theirs.aside
        assert mine.cos is not None
        assert mine.probability == pytest.approx(
            model.probability(mine.cos, mine.coverage, mine.unheard, aside=True,
                              reach=mine.reach))
        assert mine.probability < model.probability(mine.cos, mine.coverage, mine.unheard,
                                                     reach=mine.reach)
    finally:
        memory.close()
