"""A pipeline with one retrieval arm asks it for no more hits than the answer can use."""

from __future__ import annotations

from pathlib import Path

import pytest

from octomem.engine.memory.facade import open_memory
from octomem.engine.types import Query
from octomem.plugins.fts5.arm import Fts5KeywordArm

FACTS = [f"invoice rule number {i}: invoices of type {i % 7} are archived" for i in range(60)]


@pytest.mark.parametrize("fusion", ["rrf", "weighted"])
def test_keyword_only_asks_for_depth_hits_and_answers_the_same(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, fusion: str
) -> None:
    asked: list[int] = []
    search = Fts5KeywordArm.search

    def recording(self, text, filters, k):  # type: ignore[no-untyped-def]
        asked.append(k)
        return search(self, text, filters, k)

    monkeypatch.setattr(Fts5KeywordArm, "search", recording)
    answers = []
    for candidate_k in (100, 4):
        overrides = {"data_dir": str(data_dir), "pipeline": {"embedder": None, "semantic": None},
                     "retrieval": {"candidate_k": candidate_k, "fusion": fusion}}
        memory = open_memory(overrides=overrides)
        pipeline = memory.scopes.require("global", create=True)
        if not answers:
            for fact in FACTS:
                memory.remember(fact, scope="global")
        got = pipeline.search(Query("invoices archived type 3", top_k=5))
        answers.append([(h.chunk.id, h.score) for h in got.hits])
        memory.close()
    # rrf: top_k 5 uses 15 (dedup depth) of candidate_k 100, and 5 when candidate_k is 4;
    # weighted fusion normalises over the whole run, so it keeps asking candidate_k
    assert asked == ([15, 5] if fusion == "rrf" else [100, 5])
    ids = [[cid for cid, _ in answer] for answer in answers]
    assert len(ids[0]) == 5 and ids[0] == ids[1]
    if fusion == "rrf":  # RRF scores come from ranks alone: the same answer, scores included
        assert answers[0] == answers[1]
