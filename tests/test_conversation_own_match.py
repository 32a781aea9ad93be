"""The ``conversation`` reranker's lifts re-order only the turns that match the query
themselves (:mod:`octomem.plugins.conversation.own_match`; trial 17 G20: "what did you
suggest for part timeouts?" put "Sounds good. Until then ...", relevance 0.00, before the
reply that answers it). The demo's chat through a real SQLite store and the bundled
MiniLM; the floor's parts on their own arrays."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from octomem.engine.memory.facade import open_memory
from octomem.plugins.conversation.features import FEATURES
from octomem.plugins.conversation.own_match import below_unmatched, own_match

KESTREL = Path(__file__).resolve().parents[1] / "examples" / "kestrel"
REPLY = "Give each part a 30 second timeout"  # porto-uploads:7, the answer
ACKNOWLEDGED = "Sounds good. Until then"       # porto-uploads:9, no word of the question


@pytest.mark.slow
def test_the_demo_reply_comes_before_a_turn_with_no_word_of_the_question(
        tmp_path: Path) -> None:
    memory = open_memory(project_root=tmp_path / "project", global_root=tmp_path / "demo")
    try:
        memory.ingest(str(KESTREL), scope="global")
        for query in ("what did you suggest for part timeouts?",
                      "what timeout did you recommend per part?"):
            hits = memory.recall(query, top_k=10).hits
            assert REPLY in hits[0].chunk.text, (query, [h.chunk.text[:30] for h in hits])
            assert hits[0].contributions["conversation"].rank == 1
            scored = {h.chunk.text[:60]: h.contributions["conversation"].score
                      for h in memory.recall(query, top_k=10, count=False).hits
                      if "conversation" in h.contributions}
            reply = next(s for t, s in scored.items() if REPLY in t or "8 MiB is" in t)
            low = [s for t, s in scored.items() if t.startswith(f"assistant: {ACKNOWLEDGED}")]
            assert all(s < reply - 1.0 for s in low), scored  # at least one logit below
            one = memory.recall(query, top_k=1).hits
            assert len(one) == 1 and REPLY in one[0].chunk.text
    finally:
        memory.close()


def _raw(n: int, expansion: tuple[float, ...], prev_question: tuple[float, ...]) -> np.ndarray:
    raw = np.zeros((n, len(FEATURES)))
    raw[:, FEATURES.index("expansion")] = expansion
    raw[:, FEATURES.index("prev_question")] = prev_question
    return raw


def test_a_turn_matches_by_a_word_a_word_meaning_one_or_the_question_it_replies_to() -> None:
    matches = np.array([[False, False], [True, False], [False, False], [False, False]])
    raw = _raw(4, (0.0, 0.0, 0.7, 0.0), (0.0, 0.0, 0.0, 0.2))
    assert own_match(matches, raw).tolist() == [False, True, True, True]
    # a query without content words: nothing matches by its words
    none = own_match(np.zeros((2, 0), dtype=bool), _raw(2, (0.0, 0.0), (0.0, 0.0)))
    assert none.tolist() == [False, False]


def test_turns_that_do_not_match_go_below_every_one_that_does() -> None:
    # the demo's scores for "what did you suggest ...?" before the floor: "Sounds good"
    # -4.44 first, the reply -5.19, another assistant turn -5.70, an unmatched user turn
    scores = np.array([-4.44, -5.19, -5.70, -4.81])
    matched = np.array([False, True, True, False])
    out = below_unmatched(scores, matched)
    # one shift of 1.26 (-4.44 - -5.70) + 1 for both: their order and the others' stay
    assert out == pytest.approx([-6.70, -5.19, -5.70, -7.07])
    assert out.tolist() != scores.tolist() and scores[0] == -4.44  # a new array
    assert np.argsort(-out).tolist() == [1, 2, 0, 3]


@pytest.mark.parametrize("matched", [[True, True, True], [False, False, False]])
def test_nothing_moves_when_every_turn_or_none_matches(matched: list[bool]) -> None:
    scores = np.array([-1.0, -3.0, -2.0])
    assert below_unmatched(scores, np.array(matched)) is scores


def test_nothing_moves_when_the_turns_that_do_not_match_are_below_already() -> None:
    scores = np.array([-1.0, -3.0, -2.5])
    assert below_unmatched(scores, np.array([True, False, True])) is scores
