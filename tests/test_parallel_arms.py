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


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[int]]]:
    """(thread name, ids) of every ``get_chunks`` call of the ``sqlite`` storage."""
    from octomem.plugins.sqlite.storage import SqliteStorage

    seen: list[tuple[str, list[int]]] = []
    get_chunks = SqliteStorage.get_chunks

    def recording(self, chunk_ids):  # type: ignore[no-untyped-def]
        seen.append((threading.current_thread().name, [int(i) for i in chunk_ids]))
        return get_chunks(self, chunk_ids)

    monkeypatch.setattr(SqliteStorage, "get_chunks", recording)
    return seen


#: Bound on a slow half's wait for the other half's read-ahead (a hang guard only).
READ_AHEAD_WAIT_S = 60.0


def _slow(monkeypatch: pytest.MonkeyPatch, cls: type, name: str,
          reads: list[tuple[str, list[int]]], side_by_side: dict[str, bool]) -> None:
    """Make the first call of ``cls.name`` once ``side_by_side["on"]`` is set (the halves
    of one search side by side) end only once another thread has read chunks (the other
    half's read-ahead), so the other half ends first whatever the machine's load. A 0.2 s
    sleep did this before: a half delayed longer than that on a loaded machine found the
    slow one done and rightly read nothing ahead."""
    import time

    real = getattr(cls, name)

    def slow(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        if side_by_side["on"]:
            side_by_side["on"] = False  # later calls of the search (on any thread) run at once
            me, deadline = threading.current_thread().name, time.monotonic() + READ_AHEAD_WAIT_S
            while not any(who != me for who, _ in reads) and time.monotonic() < deadline:
                time.sleep(0.005)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, slow)


@pytest.mark.parametrize("slow_half", ["embedding", "keyword"])
def test_the_half_that_ends_first_reads_its_chunks_ahead_and_the_answer_is_the_same(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, slow_half: str
) -> None:
    """Side by side, the half that ends first reads its run's first chunks while the other
    still runs (the keyword arm's on the worker during a slow embedding; the semantic
    arm's on the calling thread during a slow keyword arm); loading the answer then reads
    only the chunks not read ahead, and the hits, scores and relevance are the serial
    search's, byte for byte."""
    from octomem.plugins.sqlite_vec.arm import SqliteVecSemanticArm

    answers, reads, side_by_side = {}, _reads(monkeypatch), {"on": False}
    if slow_half == "embedding":
        _slow(monkeypatch, HashingEmbedder, "embed_query", reads, side_by_side)
    else:
        _slow(monkeypatch, Fts5KeywordArm, "search", reads, side_by_side)
    runs: dict[str, list[int]] = {}
    for name, cls in (("fts5", Fts5KeywordArm), ("sqlite-vec", SqliteVecSemanticArm)):
        real = cls.search

        def recording(self, *args, _real=real, _name=name, **kwargs):  # type: ignore[no-untyped-def]
            run = _real(self, *args, **kwargs)
            if _name not in runs:
                runs[_name] = [h.chunk_id for h in run]
            return run

        monkeypatch.setattr(cls, "search", recording)
    overrides = {"data_dir": str(data_dir), "pipeline": {"embedder": "hashing"}}
    memory = open_memory(overrides=overrides)
    for i, fact in enumerate(FACTS * 8):  # 40 chunks: more than a search loads (top_k 5: 15)
        memory.remember(f"{fact}, note {i} of the {['ops', 'finance'][i % 2]} team",
                        scope="global")
    pipeline = memory.scopes.require("global")
    for parallel in (True, False):
        object.__setattr__(pipeline.settings.retrieval, "parallel_arms", parallel)
        side_by_side["on"] = parallel
        reads.clear()
        runs.clear()
        got = pipeline.search(Query("invoice approval archive deploys", top_k=5))
        answers[parallel] = [(h.chunk.id, h.score, h.relevance) for h in got.hits]
        if parallel:
            first = "fts5" if slow_half == "embedding" else "sqlite-vec"
            thread = "octomem-arm" if first == "fts5" else "MainThread"
            ahead = [ids for name, ids in reads if name.startswith(thread)][0]
            assert ahead == runs[first][:15] and len(ahead) == 15
            loaded = [ids for name, ids in reads if name == "MainThread"][-1]
            assert not set(loaded) & set(ahead)  # read once
        else:
            assert [name for name, _ in reads] == ["MainThread"]
    memory.close()
    assert answers[True] == answers[False] and len(answers[True]) == 5


def test_the_dedup_prepares_the_chunks_read_ahead_on_the_worker(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The keyword half's read-ahead (during a slow embedding) hands its chunks to the
    ``cosine`` dedup's ``prepare`` on the worker, whose normalised texts dedup then finds
    in its cache; the answer is the serial search's."""
    from octomem.plugins.dedup import cosine

    prepared: list[tuple[str, list[int]]] = []
    prepare = cosine.CosineDedup.prepare

    def recording(self, chunks):  # type: ignore[no-untyped-def]
        prepared.append((threading.current_thread().name, [c.id for c in chunks]))
        return prepare(self, chunks)

    monkeypatch.setattr(cosine.CosineDedup, "prepare", recording)
    reads, side_by_side = _reads(monkeypatch), {"on": False}
    _slow(monkeypatch, HashingEmbedder, "embed_query", reads, side_by_side)
    memory = open_memory(overrides={"data_dir": str(data_dir),
                                    "pipeline": {"embedder": "hashing", "dedup": "cosine"}})
    for i, fact in enumerate(FACTS * 8):
        memory.remember(f"{fact}, note {i}", scope="global")
    pipeline = memory.scopes.require("global")
    answers = {}
    for parallel in (True, False):
        object.__setattr__(pipeline.settings.retrieval, "parallel_arms", parallel)
        side_by_side["on"] = parallel
        prepared.clear()
        reads.clear()
        cosine.normalise_text.cache_clear()
        got = pipeline.search(Query("invoice approval archive deploys", top_k=5))
        answers[parallel] = [(h.chunk.id, h.score, h.relevance) for h in got.hits]
        if parallel:
            ahead = [ids for name, ids in reads if name.startswith("octomem-arm")][0]
            assert prepared == [(prepared[0][0], ahead)] and len(ahead) == 15
            assert prepared[0][0].startswith("octomem-arm")
            assert cosine.normalise_text.cache_info().hits >= 1  # dedup found some
        else:
            assert prepared == []
    memory.close()
    assert answers[True] == answers[False] and len(answers[True]) == 5
