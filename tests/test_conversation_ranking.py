"""The ``conversation`` reranker and relevance: real SQLite store, real fts5 arm."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from octomem.engine.memory.facade import open_memory
from octomem.engine.relevance import RelevanceModel, band, relevance_of, shipped_model
from octomem.engine.types import Document, Query

FILLER = [
    "I baked bread this morning and it came out great.",
    "The weather has been rainy all week here.",
    "My cousin started a new job at the hospital.",
    "We watched a documentary about whales last night.",
    "I am thinking of repainting the kitchen blue.",
    "The dog chewed my running shoes again.",
    "Work has been busy with the quarterly reports.",
    "I finally finished that long fantasy novel.",
    "Our neighbours planted tomatoes in their garden.",
    "I signed up for a pottery class on Thursdays.",
]
#: (speaker, text): Ben's answer replies to Ana's question, naming neither Lisbon nor a
#: hotel; Ana's own later turn repeats the question's words.
DIALOGUE = [
    ("Ana", "Where did you stay on your trip to Lisbon?"),
    ("Ben", "A tiny guesthouse in Alfama, right under the castle walls."),
    *[(("Ana", "Ben")[i % 2], t) for i, t in enumerate(FILLER)],
    ("Ana", "I still want to go to Lisbon and stay somewhere nice on a trip."),
    *[(("Ben", "Ana")[i % 2], t) for i, t in enumerate(FILLER)],
]


def _turns() -> list[Document]:
    return [
        Document(
            text=f"{speaker}: {text}", id=f"chat-{i}", kind="TURN",
            metadata={"conversation": "chat", "session": "1" if i < 12 else "2",
                      "position": i, "speaker": speaker},
        )
        for i, (speaker, text) in enumerate(DIALOGUE)
    ]


def _pipeline(data_dir: Path, reranker: str | None):  # type: ignore[no-untyped-def]
    overrides = {"data_dir": str(data_dir),
                 "pipeline": {"embedder": None, "semantic": None, "reranker": reranker}}
    memory = open_memory(overrides=overrides)
    return memory, memory.scopes.require("global", create=True)


def test_the_reply_to_the_question_is_ranked_first_by_the_conversation_ranking(
    data_dir: Path,
) -> None:
    query = Query("Where did Ben stay in Lisbon?", top_k=5)
    memory, pipeline = _pipeline(data_dir, None)
    pipeline.add(_turns())
    bm25 = [h.chunk.document_id for h in pipeline.search(query).hits]
    memory.close()
    memory, pipeline = _pipeline(data_dir, "conversation")
    answer = pipeline.search(query)
    memory.close()
    ranked = [h.chunk.document_id for h in answer.hits]
    assert bm25[0] != "chat-1"  # BM25 prefers the turns repeating the question's words
    assert ranked[0] == "chat-1"
    assert "conversation" in answer.arms_ran
    assert answer.hits[0].contributions["conversation"].rank == 1


def test_documents_keep_their_fused_order(data_dir: Path) -> None:
    docs = [Document(text=t, id=f"d{i}") for i, t in enumerate(FILLER)]
    query = Query("bread kitchen garden class", top_k=8)
    memory, pipeline = _pipeline(data_dir, None)
    pipeline.add(docs)
    plain = [(h.chunk.id, h.score) for h in pipeline.search(query).hits]
    memory.close()
    memory, pipeline = _pipeline(data_dir, "conversation")
    answer = pipeline.search(query)
    memory.close()
    assert [(h.chunk.id, h.score) for h in answer.hits] == plain
    assert "conversation" not in answer.arms_ran


def test_recall_abstains_with_a_reason_when_nothing_is_relevant(tmp_path: Path) -> None:
    memory = open_memory(overrides={"data_dir": str(tmp_path / "data"),
                                    "pipeline": {"embedder": "hashing"}},
                         project_root=tmp_path)
    memory.remember("The frontend is built with Svelte and Vite", kind="FACT")
    memory.remember("Tests run with make check", kind="FACT")
    found = memory.recall("what is the frontend built with")
    unrelated = memory.recall("protobuf schema registry migration plan")
    memory.close()
    assert found.hits and found.abstained is None
    assert found.hits[0].chunk.text.startswith("The frontend")
    assert found.hits[0].relevance is not None and found.hits[0].relevance.band in (
        "high", "medium")
    assert unrelated.hits == []
    assert unrelated.abstained is not None
    assert "retrieval.relevance_floor" in unrelated.abstained


def test_relevance_is_a_probability_monotone_in_cosine_and_coverage() -> None:
    model = shipped_model()
    grid = np.linspace(-1, 1, 21)
    for cov in np.linspace(0, 1, 11):
        p = [model.probability(float(c), float(cov)) for c in grid]
        assert all(0.0 <= x <= 1.0 for x in p)
        assert all(b >= a for a, b in zip(p, p[1:], strict=False))
    for cos in grid:
        p = [model.probability(float(cos), float(v)) for v in np.linspace(0, 1, 11)]
        assert all(b >= a for a, b in zip(p, p[1:], strict=False))
    keyword_only = [model.probability(None, float(v)) for v in np.linspace(0, 1, 11)]
    assert all(b >= a for a, b in zip(keyword_only, keyword_only[1:], strict=False))


def test_relevance_explains_what_it_came_from() -> None:
    model = RelevanceModel(hybrid=(6.0, 6.0, 0.0, -8.0), keyword=(5.0, -4.0), embedder="mini")
    rel = relevance_of("where do the CI builds run", "The CI builds run on GitHub Actions", 0.5,
                       0.06, model, embedder="mini-v2")
    assert rel.coverage == pytest.approx(1.0)
    assert rel.cos == pytest.approx(0.5)
    assert rel.probability == pytest.approx(1 / (1 + np.exp(-(3.0 + 6.0 - 8.0))))
    assert rel.band == "high"
    assert band(0.1, 0.06) == "medium" and band(0.01, 0.06) == "low"
    other = relevance_of("where do the CI builds run", "The CI builds run on GitHub Actions",
                         0.5, 0.06, model, embedder="hashing")
    assert other.cos is None  # another embedder's cosine is not what the weights know
    assert other.probability == pytest.approx(1 / (1 + np.exp(-(5.0 - 4.0))))


def test_recall_leaves_out_hits_far_weaker_than_the_best(tmp_path: Path) -> None:
    def recall(relative_floor: float):  # type: ignore[no-untyped-def]
        memory = open_memory(overrides={
            "data_dir": str(tmp_path / "data"), "pipeline": {"embedder": "hashing"},
            "retrieval": {"relative_floor": relative_floor}}, project_root=tmp_path)
        if not memory.recall("frontend").hits:
            memory.remember("The frontend is built with Svelte and Vite", kind="FACT")
            for text in FILLER:
                memory.remember(text, kind="NOTE")
        answer = memory.recall("what is the frontend built with", top_k=10)
        memory.close()
        return answer

    every = recall(0.0)
    trimmed = recall(0.04)
    best = every.hits[0].relevance.probability
    weak = [h for h in every.hits
            if h.relevance.probability < min(0.033, 0.04 * best)]
    assert every.weak_left_out == 0 and len(every.hits) == 10
    assert weak  # the filler notes share no word and no meaning with the question
    assert trimmed.hits[0].chunk.text.startswith("The frontend")
    assert trimmed.weak_left_out == len(weak)
    assert [h.chunk.id for h in trimmed.hits] == [
        h.chunk.id for h in every.hits if h not in weak]


def test_a_turns_other_chunks_follow_every_turns_first() -> None:
    """Trial 15 F18: a turn's chunks after its first go behind every scored turn's first
    chunk; a document's chunks, unscored hits and another scope's turn of the same id keep
    their places."""
    from types import SimpleNamespace

    from octomem.engine.rerank import one_place_per_turn
    from octomem.engine.types import Chunk

    def hit(doc: str, scope: str = "local", turn: bool = True) -> SimpleNamespace:
        meta = {"conversation": "c", "position": int(doc[1:])} if turn else {}
        return SimpleNamespace(scope=scope, chunk=Chunk(doc, 0, "x", metadata=meta,
                                                        revision=1))

    hits = [hit("t1"), hit("t9"), hit("t9"), hit("d1", turn=False), hit("t9"), hit("t2"),
            hit("t9", "global"), hit("t3")]
    scored = np.array([True] * 7 + [False])
    order = np.array([1, 2, 0, 3, 4, 5, 6, 7])  # the reranker's: t9 first, twice
    got = one_place_per_turn(hits, order, scored)
    assert [(hits[i].scope[0], hits[i].chunk.document_id) for i in got] == [
        ("l", "t9"), ("l", "t1"), ("l", "t2"), ("l", "d1"), ("g", "t9"), ("l", "t9"),
        ("l", "t9"), ("l", "t3")]
    assert one_place_per_turn(hits[:2], np.array([1, 0]), scored[:2]).tolist() == [1, 0]
