"""A store holding a few files answers questions about them (the bundled MiniLM, a real
SQLite store): its runs are the whole store, no background for the document weights, so
its documents are judged with the turn weights and ``retrieval.relevance_floor``; a
store larger than the runs keeps the document weights (SciFact's regime)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from octomem.engine.memory.facade import Memory, open_memory
from octomem.engine.settings import RetrievalSettings

pytestmark = pytest.mark.slow
#: The turn floor (``retrieval.relevance_floor``'s default).
FLOOR = RetrievalSettings().relevance_floor

HANDBOOK = """# Staff handbook

## Paid leave

Every employee gets 25 days of paid leave a year. Unused days carry over until March.

## Expenses

Submit expenses within 30 days of the purchase, with the receipt, through the portal.
The expenses deadline for the year's claims is 15 December.

## Remote work

You may work remotely up to three days a week after agreeing it with your manager.

## Equipment

Laptops are replaced every four years; report a broken one to the IT desk.
"""
PELICAN = "# Pelican feeding\n\nThe pelicans at the harbour are fed at 4 pm by the keeper.\n"
OTHERS = {
    "ci.md": "# CI\n\nThe CI builds run on GitHub Actions runners every night.\n",
    "db.md": "# Database\n\nWe keep the production data in PostgreSQL 16 on a managed host.\n",
    "deploy.md": "# Deploys\n\nDeploys go out on Tuesdays after the release review.\n",
    "oncall.md": "# On call\n\nThe on-call rotation changes every Monday at 10 am.\n",
    "coffee.md": "# Coffee\n\nThe office coffee machine is descaled on the first Friday.\n",
    "garden.md": "# Garden\n\nThe roof garden's tomatoes are watered twice a day in July.\n",
    "bikes.md": "# Bikes\n\nBicycles are parked in the basement rack next to the lifts.\n",
    "library.md": "# Library\n\nBooks from the office library go back within three weeks.\n",
}


def _memory(tmp_path: Path, files: dict[str, str], **retrieval: object) -> Memory:
    notes = tmp_path / "notes"
    notes.mkdir()
    for name, text in files.items():
        (notes / name).write_text(text, encoding="utf-8")
    (tmp_path / "project").mkdir()
    memory = open_memory(project_root=tmp_path / "project", global_root=tmp_path / "global",
                         overrides={"retrieval": retrieval} if retrieval else None)
    memory.ingest(str(notes))
    return memory


@pytest.fixture
def handbook(tmp_path: Path) -> Iterator[Memory]:
    memory = _memory(tmp_path, {"handbook.md": HANDBOOK})
    yield memory
    memory.close()


def _answers(memory: Memory, question: str, words: str) -> float:
    """Assert the first hit of ``question`` holds ``words`` and passes its floor."""
    answer = memory.recall(question)
    assert not answer.abstained, (question, answer.abstained)
    first = answer.hits[0]
    assert words in first.chunk.text, (question, first.chunk.text)
    assert first.relevance is not None and first.relevance.cos is not None
    assert first.relevance.probability >= FLOOR
    assert first.relevance.cos_lift is None  # turn weights: no background in this store
    return first.relevance.probability


@pytest.mark.parametrize(("question", "words"), [
    ("pelican feeding", "fed at 4 pm"), ("pelicans", "fed at 4 pm"),
    ("when are the pelicans fed?", "fed at 4 pm")])
def test_one_file_answers_in_its_own_words(tmp_path: Path, question: str, words: str) -> None:
    memory = _memory(tmp_path, {"pelican.md": PELICAN})
    try:
        assert _answers(memory, question, words) > 0.3  # 0.022 before: the run was the hit
        none = memory.recall("largemouth bass fishing")
        assert none.hits == [] and f"retrieval.relevance_floor {FLOOR:g}" in none.abstained
    finally:
        memory.close()


def test_the_handbook_alone_answers_and_abstains(handbook: Memory) -> None:
    _answers(handbook, "how many days of paid leave?", "25 days of paid leave")
    _answers(handbook, "expenses deadline", "15 December")
    for never in ("largemouth bass fishing", "quantum chromodynamics lattice"):
        none = handbook.recall(never)
        assert none.hits == [] and none.abstained, never
        assert none.best_rejected.relevance.probability < FLOOR


@pytest.mark.parametrize("count", [2, 3, 10])
def test_a_few_files_answer_about_each(tmp_path: Path, count: int) -> None:
    files = {"handbook.md": HANDBOOK, "pelican.md": PELICAN,
             **dict(list(OTHERS.items())[: count - 2])}
    memory = _memory(tmp_path, files)
    try:
        _answers(memory, "how many days of paid leave?", "25 days")
        _answers(memory, "when are the pelicans fed?", "fed at 4 pm")
        if count == 10:
            _answers(memory, "where do the CI builds run", "GitHub Actions")
            _answers(memory, "which database holds the production data", "PostgreSQL")
        assert memory.recall("largemouth bass fishing").hits == []
    finally:
        memory.close()


def test_a_store_larger_than_its_runs_keeps_the_document_weights(tmp_path: Path) -> None:
    # candidate_k 4 < the store's chunks: the runs are a background, as on SciFact
    memory = _memory(tmp_path, {"handbook.md": HANDBOOK, "pelican.md": PELICAN, **OTHERS},
                     candidate_k=4)
    try:
        answer = memory.recall("when are the pelicans fed?")
        first = answer.hits[0]
        assert "fed at 4 pm" in first.chunk.text
        assert first.relevance.cos_lift is not None and first.relevance.kw_z is not None
        assert first.relevance.probability >= 0.07  # retrieval.document_relevance_floor
        none = memory.recall("largemouth bass fishing")
        assert none.hits == [] and "retrieval.document_relevance_floor" in none.abstained
    finally:
        memory.close()
