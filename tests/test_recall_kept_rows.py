"""What a recall keeps between queries (the ``conversation`` reranker's facts of each
chunk, the rows of each candidate's words: :meth:`WordVectors.grouped_rows`) never
outlives a write: after a remember, a grown transcript's ingest or a forget, the next
recall answers exactly as a Memory opened afresh on the same store, which has kept
nothing (issue 12, latency: the rankings stay the same bit for bit)."""

from __future__ import annotations

import json
from pathlib import Path

from octomem.engine.memory.facade import Memory, open_memory

TURNS = [("Ann", "Where did you go hiking last weekend?"),
         ("Bo", "Up the kestrel ridge trail, it was steep."),
         ("Ann", "Did you take the dog along?"),
         ("Bo", "Yes, Pepper loved the ridge and the lake."),
         ("Ann", "I bought new boots for the next hike."),
         ("Bo", "The invoice archive keeps PDFs for years.")]
MORE = [("Ann", "Pepper swam across the whole lake yesterday."),
        ("Bo", "Then the dog must have been exhausted after the swim.")]
QUESTION = "Where did Bo's dog swim in the lake?"


def _write(path: Path, turns: list[tuple[str, str]]) -> None:
    path.write_text("".join(
        json.dumps({"session": str(i // 3 + 1), "speaker": speaker, "text": text,
                    "time": f"2024-05-0{i // 3 + 1}T10:00:00Z"}) + "\n"
        for i, (speaker, text) in enumerate(turns)), encoding="utf-8")


def _open(tmp_path: Path) -> Memory:
    return open_memory(project_root=tmp_path / "project", global_root=tmp_path / "global")


def _ranking(memory: Memory) -> list[tuple[str, str, float, float]]:
    answer = memory.recall(QUESTION, count=False)
    return [(h.scope, h.chunk.text, round(h.fused_score, 12),
             round(h.relevance.probability if h.relevance else -1.0, 12))
            for h in answer.hits]


def _as_fresh(memory: Memory, tmp_path: Path) -> list[tuple[str, str, float, float]]:
    kept = _ranking(memory)
    assert _ranking(memory) == kept  # asked again: from what the first recall kept
    fresh = _open(tmp_path)
    try:
        assert _ranking(fresh) == kept
    finally:
        fresh.close()
    return kept


def test_writes_between_two_recalls_change_the_answer_as_a_fresh_memory_sees_it(
        tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    chat = tmp_path / "walks.jsonl"
    _write(chat, TURNS)
    memory = _open(tmp_path)
    try:
        memory.ingest(str(chat))
        before = _as_fresh(memory, tmp_path)
        assert before and not any(MORE[0][1] in text for _, text, _, _ in before)
        memory.remember("Pepper the dog is afraid of deep lake water.")
        remembered = _as_fresh(memory, tmp_path)
        assert "Pepper the dog is afraid of deep lake water." in [t for _, t, _, _ in remembered]
        _write(chat, TURNS + MORE)  # the transcript grew: its new turns only are added
        memory.ingest(str(chat))
        grown = _as_fresh(memory, tmp_path)
        assert any(MORE[0][1] in t for _, t, _, _ in grown) and grown != remembered
        memory.forget("Pepper the dog is afraid of deep lake water.")
        forgotten = _as_fresh(memory, tmp_path)
        assert "Pepper the dog is afraid of deep lake water." not in [
            t for _, t, _, _ in forgotten]
    finally:
        memory.close()
