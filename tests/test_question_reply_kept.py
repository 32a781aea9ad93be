"""The reply to a question turn the query matched comes with it (the bundled MiniLM, a
real SQLite store, a transcript ingested as a user would).

A fresh user's trial (trial 10): ``recall "where are we staying in Porto"`` returned only
"Ben: Where are we staying in Porto?" — the answer, "Ana: A small guesthouse in Ribeira",
ranked second with relevance 0.01, was left out by ``retrieval.relative_floor`` (0.04 ×
the question's 0.63). The reply shares no word with the query, so its own relevance is
low; it is the answer to the question the user matched."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from octomem.engine.memory.facade import Memory, open_memory

pytestmark = pytest.mark.slow

TRIP = [
    ("1", "Ana", "Which train should we take to Porto on Friday?"),
    ("1", "Ben", "The 9:09 Alfa Pendular, it gets in before noon."),
    ("1", "Ana", "Yes, book that one."),
    ("2", "Ben", "Where are we staying in Porto?"),
    ("2", "Ana", "A small guesthouse in Ribeira, by the river."),
    ("2", "Ben", "Did you remember the charger for the camera?"),
    ("2", "Ana", "Yes, it is in the blue bag."),
]


@pytest.fixture(scope="module")
def trip(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    root = tmp_path_factory.mktemp("trip")
    chat = root / "trip.jsonl"
    chat.write_text("".join(json.dumps(
        {"conversation": "trip", "session": s, "speaker": who, "text": text,
         "time": f"2024-05-0{s}T10:0{i}:00Z"}) + "\n" for i, (s, who, text) in enumerate(TRIP)),
        encoding="utf-8")
    (root / "project").mkdir()
    memory = open_memory(project_root=root / "project", global_root=root / "global")
    memory.ingest(str(chat))
    yield memory
    memory.close()


@pytest.mark.parametrize(("query", "question", "reply"), [
    ("where are we staying in Porto", "Where are we staying", "guesthouse in Ribeira"),
    ("which train did we take", "Which train should we take", "9:09 Alfa Pendular"),
    ("what time does our train to Porto leave?", "Which train", "9:09 Alfa Pendular"),
    ("where is the camera charger?", "charger for the camera", "blue bag"),
])
def test_reply_to_matched_question_is_kept(trip: Memory, query: str, question: str,
                                           reply: str) -> None:
    answer = trip.recall(query)
    assert not answer.abstained, answer.abstained
    texts = [h.chunk.text for h in answer.hits]
    asked = next(i for i, t in enumerate(texts) if question in t)
    assert answer.hits[asked].relevance.band != "low"  # the question turn passed
    assert any(reply in t for t in texts), texts


def test_a_low_turn_after_a_statement_is_still_left_out(trip: Memory) -> None:
    """Only a question's reply is kept: "Yes, book that one." follows a statement."""
    answer = trip.recall("which train did we take")
    assert not any("book that one" in h.chunk.text for h in answer.hits)
