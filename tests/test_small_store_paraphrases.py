"""Paraphrases asked of a small memory are answered, and questions it cannot answer are
not (the bundled MiniLM, a real SQLite store; issue 12, relevance; a fresh user's trial
abstained on "which postgres version do we use?" asked of "We run PostgreSQL 16 in
production"). The check itself (``tests/paraphrase_set.py``) chose nothing: the
small-store weight was chosen on the tune splits (``benchmarks/fit_turn_relevance.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from octomem.engine import relevance, relevance_model
from octomem.engine.memory.facade import open_memory
from octomem.engine.small_store import SMALL_STORE
from tests.paraphrase_set import OFF_TOPIC, PARAPHRASES, STATEMENTS

pytestmark = pytest.mark.slow


def _check(root: Path) -> tuple[list[str], list[str], set[int | None]]:
    """Remember :data:`STATEMENTS`; return the paraphrases whose statement is in the
    answer, the off-topic questions that got hits, and the reaches seen."""
    (root / "project").mkdir()
    memory = open_memory(project_root=root / "project", global_root=root / "global")
    try:
        ids = {text: memory.remember(text).document.id for text in STATEMENTS}
        answered, wrong, reaches = [], [], set()
        for question, statement in PARAPHRASES:
            answer = memory.recall(question)
            if any(h.chunk.document_id == ids[statement] for h in answer.hits):
                answered.append(question)
            best = answer.hits[0] if answer.hits else answer.best_rejected
            assert best is not None and best.relevance is not None
            reaches.add(best.relevance.reach)
        for question in OFF_TOPIC:
            answer = memory.recall(question)
            if answer.hits:
                wrong.append(question)
            else:
                assert answer.abstained and "nothing stored answers this" in answer.abstained
    finally:
        memory.close()
    return answered, wrong, reaches


def test_paraphrases_in_a_small_memory_are_answered(tmp_path: Path) -> None:
    answered, wrong, reaches = _check(tmp_path)
    # 3 of 12 before the small-store term, 7 with it; every off-topic question abstains
    assert len(answered) >= 7, answered
    assert "which postgres version do we use?" in answered
    assert wrong == []
    assert reaches == {len(STATEMENTS)} and len(STATEMENTS) < SMALL_STORE


def test_without_the_small_store_term_most_are_not(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    def off(weight: float, reach: int | None, least: int = 0) -> float:
        return 0.0

    # the model adds the term (relevance_model), relevance_of says whether it did
    monkeypatch.setattr(relevance_model, "small_term", off)
    monkeypatch.setattr(relevance, "small_term", off)
    answered, wrong, _ = _check(tmp_path)
    assert len(answered) <= 4, answered
    assert wrong == []
