"""The turns beside the best fused turns join the conversation reranker's candidates
(``arms.conversation.neighbours``, :mod:`octomem.engine.turn_neighbours`): a reply no arm
returns is ranked with the question it answers, through ``recall`` and the pipeline."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from octomem.engine.memory.facade import Memory, open_memory
from octomem.engine.turn_neighbours import neighbour_depth, neighbour_turns
from octomem.engine.turns import TURN_KIND
from octomem.engine.types import Filters, Query

#: (session, speaker, text, time). Each arm returns 10 candidates (a recall's ``top_k``),
#: all among the 15 turns holding a question word (positions 0, 4, 6 and session 3); the
#: reply at position 1 holds none of them. Position 3 is the turn before position 4, but
#: in another session.
CHAT = [
    ("1", "Ana", "Did you finish the screenplay about the lighthouse keeper?", "10:00"),
    ("1", "Ben", "Yes! It is a mix of drama and romance.", "10:01"),
    ("1", "Ana", "Lovely, I will pack sunscreen.", "10:02"),
    ("1", "Ben", "Sounds good to me.", "10:03"),
    ("2", "Ana", "A lighthouse stands on the coast.", "11:00"),
    ("2", "Ben", "We walked there at dawn.", "11:01"),
    ("2", "Ana", "I read a screenplay on the train.", "11:02"),
    ("2", "Ben", "Which one?", "11:03"),
] + [("3", ("Ana", "Ben")[i % 2], f"Lighthouse number {i} was on our way.", f"12:{i:02d}")
     for i in range(12)]
QUESTION = "lighthouse keeper screenplay"


def _open(root: Path, neighbours: int) -> Memory:
    # every hit stays (no relevance floor, no cut of far weaker hits): these tests are
    # about which turns are candidates, with the hashing embedder's cosines
    return open_memory(overrides={
        "pipeline": {"embedder": "hashing"},
        "retrieval": {"relative_floor": 0, "relevance_floor": 0, "candidate_k": 10},
        "arms": {"conversation": {"neighbours": neighbours}}},
        project_root=root / "project", global_root=root / "global")


@pytest.fixture(params=[10, 0], ids=["neighbours", "none"])
def memory(request: Any, tmp_path: Path) -> Iterator[tuple[Memory, int]]:
    (tmp_path / "project").mkdir()
    path = tmp_path / "film.jsonl"
    path.write_text("".join(json.dumps({"session": s, "speaker": who, "text": text,
                                        "time": f"2024-06-01T{at}:00"}) + "\n"
                            for s, who, text, at in CHAT))
    opened = _open(tmp_path, request.param)
    opened.ingest(str(path))
    yield opened, request.param
    opened.close()


def _ids(hits: Any) -> list[str]:
    return [h.chunk.document_id for h in hits]


def test_a_reply_no_arm_returns_joins_the_answer(memory: tuple[Memory, int]) -> None:
    chat, neighbours = memory
    found = _ids(chat.recall(QUESTION, kinds=[TURN_KIND]).hits)
    assert "film:0" in found
    if neighbours:
        assert "film:1" in found  # the reply beside the question
    else:
        assert "film:1" not in found
    assert "film:3" not in found  # before position 4, but in session 1
    assert "film:2" not in found  # beside the reply only, which no arm returned


def test_the_pipeline_answers_with_the_same_candidates(memory: tuple[Memory, int]) -> None:
    chat, neighbours = memory
    (_, pipeline), = chat.scopes.existing()
    answer = pipeline.search(Query(QUESTION, top_k=10))
    found = _ids(answer.hits)
    assert ("film:1" in found) == bool(neighbours)
    assert "film:3" not in found
    recalled = _ids(chat.recall(QUESTION, kinds=[TURN_KIND], count=False).hits)
    assert sorted(found) == sorted(recalled)
    added = [h for h in answer.hits if h.chunk.document_id == "film:1"]
    assert all(h.contributions.keys() == {"conversation"} for h in added)  # no arm's


def test_a_neighbour_outside_the_filters_stays_out(memory: tuple[Memory, int]) -> None:
    chat, neighbours = memory
    # valid from before 10:01: the question's turn passes, its reply does not
    found = _ids(chat.recall(QUESTION, kinds=[TURN_KIND],
                             until="2024-06-01T10:00:30+00:00").hits)
    assert found == ["film:0"]


def test_neighbour_turns_reads_each_side_once(memory: tuple[Memory, int]) -> None:
    chat, neighbours = memory
    (_, pipeline), = chat.scopes.existing()
    storage = pipeline.arms.storage
    turns = {c.document_id: c for c in storage.iter_chunks()}

    class Held:
        def __init__(self, chunk: Any) -> None:
            self.chunk = chunk

    hits = [Held(turns[d]) for d in ("film:4", "film:6", "film:0")]
    got = neighbour_turns(storage, hits, 3, Filters(), lambda c: c.document_id == "film:7")
    # 4: 3 is in session 1, 5 kept; 6: 5 given once, 7 held; 0: no position -1, 1 kept
    assert [c.document_id for c in got] == ["film:5", "film:1"]
    assert neighbour_turns(storage, hits, 1, Filters(), lambda c: False) == [turns["film:5"]]
    assert neighbour_turns(storage, hits, 0, Filters(), lambda c: False) == []
    assert neighbour_depth(pipeline.arms.reranker, hits) == neighbours
    assert neighbour_depth(None, hits) == 0
