"""``retrieval.parallel_arms``: the keyword arm and the query's embedding run on two threads
(a pipeline's search: the keyword arm on a worker; a recall: the embedding on a worker, the
keyword arm on the calling thread); the answer is unchanged."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from octomem.engine.memory.facade import open_memory
from octomem.engine.types import Query
from octomem.plugins.fts5.arm import Fts5KeywordArm
from octomem.plugins.hashing.embedder import HashingEmbedder

FACTS = [
    "The invoice archive keeps PDFs for seven years",
    "Deploys run every Tuesday after the standup",
    "The staging database is refreshed from production nightly",
    "Invoices above 10k need a second approval",
    "The VPN certificate expires in March",
]


@pytest.fixture
def threads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the threads the fts5 arm searched on."""
    seen: list[str] = []
    search = Fts5KeywordArm.search

    def recording(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(threading.current_thread().name)
        return search(self, *args, **kwargs)

    monkeypatch.setattr(Fts5KeywordArm, "search", recording)
    return seen


@pytest.fixture
def embedded_on(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Names of the threads queries were embedded on."""
    seen: list[str] = []
    embed = HashingEmbedder.embed_query

    def recording(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(threading.current_thread().name)
        return embed(self, *args, **kwargs)

    monkeypatch.setattr(HashingEmbedder, "embed_query", recording)
    return seen


@pytest.mark.parametrize("entry", ["recall", "pipeline"])
def test_parallel_and_sequential_arms_give_the_same_answer(
    data_dir: Path, threads: list[str], embedded_on: list[str], entry: str
) -> None:
    answers = {}
    for parallel in (True, False):
        overrides = {"data_dir": str(data_dir), "pipeline": {"embedder": "hashing"},
                     "retrieval": {"parallel_arms": parallel}}
        memory = open_memory(overrides=overrides)
        if not answers:
            for fact in FACTS:
                memory.remember(fact, scope="global")
        if entry == "recall":
            got = memory.recall("invoice approval archive", scope="global", top_k=5)
            answers[parallel] = [(h.chunk.id, h.score) for h in got.hits]
            assert {"fts5", "sqlite-vec"} <= set(got.arms_ran)
        else:
            pipeline = memory.scopes.require("global")
            got = pipeline.search(Query("invoice approval archive", top_k=5))
            answers[parallel] = [(h.chunk.id, h.score) for h in got.hits]
            assert got.arms_ran == ["fts5", "sqlite-vec"] and got.timings_ms["fts5"] > 0
        memory.close()
    # same hits in the same order; recall's recency bonus moves scores by ~1e-9 between calls
    assert [c for c, _ in answers[True]] == [c for c, _ in answers[False]]
    assert [s for _, s in answers[True]] == pytest.approx([s for _, s in answers[False]])
    assert len(answers[True]) >= 2
    if entry == "recall":  # the keyword arm here, the embedding on a worker meanwhile
        assert threads == ["MainThread", "MainThread"]
        assert embedded_on[0].startswith("octomem-arm") and embedded_on[1] == "MainThread"
    else:
        assert threads[0].startswith("octomem-arm") and threads[1] == "MainThread"
