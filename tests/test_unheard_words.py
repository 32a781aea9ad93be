"""Unheard words: a question naming what the memory never mentions gets a lower
relevance (real SQLite store, real fts5 arm, recall and search)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from octomem.engine.memory.facade import open_memory
from octomem.engine.relevance import UNHEARD_CAP, shipped_model, unheard_words
from octomem.engine.types import Filters, Query


def test_counts_words_in_no_hit_and_nowhere_in_the_store() -> None:
    asked: list[str] = []

    def present(word: str) -> bool:
        asked.append(word)
        return word in {"planning", "Spotify"}

    query = "How many playlists am I planning on Spotify for the Hawaii trip?"
    # "trip" is in a hit; "planning" and "Spotify" are stored elsewhere; "playlists" and
    # "hawaii" are nowhere ("many" is a function word)
    assert unheard_words(query, ["A road trip to the coast"], present) == 2
    assert "trip" not in asked and "many" not in asked
    before = len(asked)
    assert unheard_words(query, [query], present) == 0 and len(asked) == before  # all held
    assert unheard_words("what is it?", [], present) == 0  # no content words


def test_shipped_weight_lowers_relevance_per_unheard_word() -> None:
    model = shipped_model()
    assert model.unheard == -0.5
    base = model.probability(0.5, 0.5)
    two = model.probability(0.5, 0.5, unheard=2)
    odds = lambda p: p / (1 - p)  # noqa: E731
    assert odds(two) / odds(base) == pytest.approx(math.exp(2 * model.unheard))
    assert UNHEARD_CAP == 2 and model.probability(0.5, 0.5, unheard=5) == two  # capped
    # a document's hit keeps its own weights: unheard words are not part of them
    assert model.document is not None


def test_keyword_only_relevance_does_not_use_them(tmp_path: Path) -> None:
    memory = open_memory(overrides={
        "data_dir": str(tmp_path / "data"), "pipeline": {"embedder": "hashing"},
        "retrieval": {"relevance_floor": 0.0}}, project_root=tmp_path)
    try:
        memory.remember("Three bass were my catch on the fishing trip to the lake", kind="FACT")
        hit = memory.recall("largemouth bass caught at Lake Michigan", top_k=1).hits[0]
        # the hashing embedder's cosines are not the fitted ones: coverage alone decides
        assert hit.relevance.cos is None and hit.relevance.unheard == 0
        assert hit.relevance.probability == pytest.approx(
            shipped_model().probability(None, hit.relevance.coverage))
    finally:
        memory.close()


@pytest.mark.slow
@pytest.mark.parametrize("path", ["recall", "search"])
def test_recall_and_search_count_words_the_memory_never_mentions(tmp_path: Path,
                                                                 path: str) -> None:
    memory = open_memory(overrides={  # the packaged MiniLM: the cosines the weight knows
        "data_dir": str(tmp_path / "data"), "retrieval": {"relevance_floor": 0.0}},
        project_root=tmp_path)
    try:
        memory.remember("Three bass were my catch on the fishing trip to the lake", kind="FACT")
        memory.remember("The kayak rental closes at six", kind="FACT")
        known = "how many bass did I catch on the fishing trip?"
        strange = "how many largemouth bass did I catch at Lake Michigan?"
        if path == "recall":
            got = {q: memory.recall(q, top_k=5).hits for q in (known, strange)}
        else:
            pipeline = memory.scopes.get("local")
            got = {q: pipeline.search(Query(q, 5, Filters())).hits for q in (known, strange)}
        assert got[known][0].relevance.unheard == 0
        # "largemouth" and "michigan" are in no stored text ("lake" and "catch" are)
        assert {h.relevance.unheard for h in got[strange]} == {2}
        top = got[strange][0].relevance
        assert top.cos is not None
        assert top.reach == 2  # two statements: the small-store term applies too
        assert top.probability == pytest.approx(
            shipped_model().probability(top.cos, top.coverage, unheard=2, reach=2))
    finally:
        memory.close()
