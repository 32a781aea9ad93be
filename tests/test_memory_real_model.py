"""Memory semantics with the bundled all-MiniLM-L6-v2 (the default embedder, no download)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from octomem.engine.memory.facade import open_memory

pytestmark = pytest.mark.slow


def test_paraphrases_are_found_and_near_copies_reported(tmp_path: Path) -> None:
    # retrieval by meaning, not abstention: relevance (cosine and shared words) puts these
    # paraphrases below the default floor, so the floor is off here
    memory = open_memory(overrides={"retrieval": {"relevance_floor": 0}},
                         project_root=tmp_path / "project", global_root=tmp_path / "global")
    try:
        pref = memory.remember("The user prefers dark mode in every editor", scope="global",
                               kind="PREFERENCE")
        assert pref.embedded and pref.semantic_error is None
        copy = memory.remember("Note: the user prefers dark mode in every editor.",
                               scope="global")
        assert [n.document.id for n in copy.near_duplicates] == [pref.document.id]
        assert 0.85 <= copy.near_duplicates[0].similarity < 1.0
        fact = memory.remember("The CI pipeline takes about twelve minutes", kind="FACT")
        assert fact.scope == "local" and fact.near_duplicates == []
        answer = memory.recall("which colour theme does the user like?", top_k=3)
        assert answer.semantic_available and answer.arms_unavailable == {}
        assert answer.hits[0].scope == "global"
        assert answer.hits[0].chunk.document_id in {pref.document.id, copy.document.id}
        slow = memory.recall("how long does continuous integration run", top_k=1)
        assert slow.hits[0].chunk.document_id == fact.document.id
    finally:
        memory.close()


TRIP = [("Ana", "Which train should we take to Porto?"),
        ("Ben", "The 9:09 Alfa Pendular from Santa Apolonia, it takes under three hours."),
        ("Ana", "Yes, the 9:09. I'll book two seats in coach 4."),
        ("Ben", "Where do we stay in Porto?"),
        ("Ana", "A small guesthouse in Ribeira, by the river.")]
#: A Claude Code session: its user and assistant turns have other speaker kinds, whose
#: reranker weights were fitted on another chat style (LongMemEval's).
SESSION = [("user", "Why does test_upload fail intermittently on CI?"),
           ("assistant", "The test sleeps 0.1 s and races the upload worker."),
           ("user", "Thanks, that fixed it.")]


def test_turns_of_another_conversation_do_not_pass_the_match_both_arms_rank_first(
    tmp_path: Path,
) -> None:
    def lines(turns: list[tuple[str, str]], key: str) -> str:
        return "".join(json.dumps({key: who, "text": text, "session": "1",
                                   "time": f"2024-05-01T10:0{i}:00Z"}) + "\n"
                       for i, (who, text) in enumerate(turns))

    (tmp_path / "trip.jsonl").write_text(lines(TRIP, "speaker"))
    (tmp_path / "ci.jsonl").write_text(lines(SESSION, "role"))
    memory = open_memory(overrides={"retrieval": {"relevance_floor": 0, "relative_floor": 0}},
                         project_root=tmp_path / "project", global_root=tmp_path / "global")
    try:
        memory.ingest(str(tmp_path / "trip.jsonl"), scope="global")
        memory.ingest(str(tmp_path / "ci.jsonl"), scope="global")
        answer = memory.recall("train to Porto", top_k=10)
    finally:
        memory.close()
    texts = [h.chunk.text for h in answer.hits]
    first = answer.hits[0]
    assert first.chunk.text == "Ana: Which train should we take to Porto?"
    assert first.contributions["fts5"].rank == 1 and first.contributions["sqlite-vec"].rank == 1
    assert "conversation" in answer.arms_ran
    # the session's turns keep the places fusion gave them: after every trip turn
    trip = [i for i, t in enumerate(texts) if t.startswith(("Ana:", "Ben:"))]
    ci = [i for i, t in enumerate(texts) if not t.startswith(("Ana:", "Ben:"))]
    assert ci and max(trip) < min(ci)
