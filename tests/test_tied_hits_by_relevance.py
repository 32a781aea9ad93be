"""Hits that tie in the fusion are ordered by relevance (the bundled MiniLM, a real SQLite
store): the first of the keyword run and the first of the semantic run, each in one run
only, have the same fused score, and the order between them meant nothing.

A fresh user's trial (trial 10): ``recall "Marker token QY0003"`` in a store of 3,603
notes put "N 1350" (relevance 0.02, semantic rank 1, no keyword hit) before "N 3", the
only note holding QY0003 (relevance 0.22, keyword rank 1, not in the semantic run)."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from octomem.engine.memory.facade import Memory, open_memory

pytestmark = pytest.mark.slow

WORDS = ("platform ticket lens photo cable backup station camera mountain battery server "
         "river harbour album disk bridge charger").split()


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Memory]:
    root = tmp_path_factory.mktemp("notes")
    folder = root / "notes"
    folder.mkdir()
    rng = random.Random(0)
    for i in range(120):
        body = " ".join(rng.choice(WORDS) for _ in range(60))
        (folder / f"n{i:04d}.md").write_text(
            f"# N {i}\n\n{body}. Marker token QY{i:04d}.\n", encoding="utf-8")
    (root / "project").mkdir()
    # runs of 10 of 120 notes: the exact match is in the keyword run only; no abstention
    # (the order is the point; at runs of 10 its relevance 0.04 is under the floor 0.07)
    memory = open_memory(project_root=root / "project", global_root=root / "global",
                         overrides={"retrieval": {"candidate_k": 10,
                                                  "document_relevance_floor": 0.0}})
    memory.ingest(str(folder))
    yield memory
    memory.close()


@pytest.mark.parametrize("number", ["0003", "0042", "0117"])
def test_exact_match_first_at_a_tie(notes: Memory, number: str) -> None:
    answer = notes.recall(f"Marker token QY{number}")
    assert answer.hits, (answer.abstained, answer.best_rejected)
    first = answer.hits[0]
    assert f"QY{number}" in first.chunk.text, [h.chunk.text[-20:] for h in answer.hits]
    assert first.relevance is not None
    assert all(first.relevance.probability >= h.relevance.probability
               for h in answer.hits if h.relevance is not None)
