"""The keyword strength term of a turn's or statement's relevance (issue 12, abstention):
an answer whose best keyword match holds few or common query words is less likely
answered by any of its hits. ``strength`` = the keyword run's top BM25 score over ln of
the rows the ``fts5`` index holds; the term ``w · (strength − c)`` (``keyword_strength``
in ``engine/relevance.json``) is chosen by ``benchmarks/fit_strength.py`` on the
tune splits, and applies with a cosine when the semantic runs are full."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from octomem.benchmarks.fit_strength import StrengthAnswer, fit
from octomem.engine.memory.facade import open_memory
from octomem.engine.memory.recall_results import memory_hit
from octomem.engine.relevance import (
    RelevanceModel,
    keyword_strength,
    relevance_of,
    shipped_model,
)
from octomem.engine.types import Document, Filters

MODEL = RelevanceModel((5.8, 5.6, -3.3, -7.1), (5.3, -5.3), "fastembed:all-MiniLM",
                       strength=(0.6, 1.5), strength_arm="fts5")


def test_the_strength_is_the_top_score_in_units_of_the_rarest_words_idf() -> None:
    assert keyword_strength(math.log(1000), 1000) == pytest.approx(1.0)
    assert keyword_strength(2 * math.log(500), 500) == pytest.approx(2.0)
    assert keyword_strength(None, 1000) == 0.0  # no query word in the memory
    assert keyword_strength(5.0, 1) is None  # one row: no idf to measure by


def test_the_shipped_weights_use_it_with_fts5_only() -> None:
    model = shipped_model()
    weight, centre = model.strength
    assert weight > 0 and centre > 0
    assert model.uses_strength("fts5")
    assert not model.uses_strength("rank-bm25") and not model.uses_strength(None)


def test_the_term_raises_a_strong_match_and_lowers_a_weak_one() -> None:
    base = MODEL.probability(0.5, 0.5)
    assert MODEL.probability(0.5, 0.5, strength=1.5) == pytest.approx(base)
    strong, weak = (MODEL.probability(0.5, 0.5, strength=s) for s in (3.0, 0.0))
    assert weak < base < strong
    odds = lambda p: p / (1 - p)  # noqa: E731
    assert odds(strong) / odds(base) == pytest.approx(math.exp(0.6 * 1.5))
    # keyword-only weights (no cosine) do not use it
    assert MODEL.probability(None, 0.5, strength=0.0) == MODEL.probability(None, 0.5)


def test_relevance_shows_the_strength_it_used() -> None:
    used = relevance_of("spotify playlists", "I have five playlists on Spotify", 0.6, 0.033,
                        MODEL, "fastembed:all-MiniLM-L6-v2", strength=0.4)
    assert used.strength == 0.4
    assert used.probability == pytest.approx(MODEL.probability(0.6, 1.0, strength=0.4))
    other = relevance_of("spotify playlists", "I have five playlists on Spotify", 0.6, 0.033,
                         MODEL, "another:model", strength=0.4)
    assert other.cos is None and other.strength is None


def _answers(logits: np.ndarray, strength: np.ndarray, own: bool) -> list[StrengthAnswer]:
    return [StrengthAnswer(own, own, np.array([z]), 0, None, None, float(s), "fts5")
            for z, s in zip(logits, strength, strict=True)]


def test_the_fit_chooses_a_weight_when_the_strength_separates_what_the_floor_does_not() -> None:
    rng = np.random.default_rng(12)
    # own and foreign answers overlap in their hits' logits; own ones match more words
    own = _answers(rng.normal(-2.5, 0.6, 60), rng.normal(2.0, 0.4, 60), True)
    other = _answers(rng.normal(-3.6, 0.6, 200), rng.normal(0.6, 0.4, 200), False)
    result = fit({"a": own + other}, (0.0, 0.0, 0.033))
    assert float(result["weight"]) > 0  # type: ignore[arg-type]
    got = result["per_set"]["a"]  # type: ignore[index]
    assert got["abstained_other"] > got["without_strength"][1]
    assert got["kept_own"] >= 0.95 and got["own_questions"] == 60
    assert result["arm"] == "fts5"
    # the same logits with one strength for all: the term can only move every answer
    # alike (as a floor would), and separates less
    flat = fit({"a": [StrengthAnswer(a.own, a.evidence, a.logits, 0, None, None, 1.0, "fts5")
                      for a in own + other]}, (0.0, 0.0, 0.033))
    got_flat = flat["per_set"]["a"]  # type: ignore[index]
    assert got_flat["abstained_other"] < got["abstained_other"]


TOPICS = ["the garden", "my sister's wedding", "the budget spreadsheet", "a pottery class",
          "the dentist", "our kitchen renovation", "a chess club", "the car's brakes",
          "a sourdough starter", "the office move", "a violin lesson", "the tax return"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
        "last week", "yesterday", "this morning"]


@pytest.mark.slow
def test_recall_over_a_full_store_keeps_its_evidence_and_abstains_off_topic(
    tmp_path: Path,
) -> None:
    # 121 turns: the semantic runs (candidate_k 100) are full, so the term applies
    turns = [("user" if i % 2 == 0 else "assistant",
              f"I talked about {topic} on {day}." if i % 2 == 0 else
              f"Thanks for telling me about {topic}; noted for {day}.")
             for i, (topic, day) in enumerate((t, d) for t in TOPICS for d in DAYS)]
    turns.append(("user", "I have five playlists on Spotify, mostly jazz and road trip songs."))
    memory = open_memory(overrides={"data_dir": str(tmp_path / "data")}, project_root=tmp_path)
    try:
        pipeline = memory.scopes.require("global", create=True)
        pipeline.add([
            Document(text=f"{role}: {text}", id=f"t{i}", kind="TURN",
                     metadata={"conversation": "chat", "session": str(i // 20),
                               "position": i, "speaker": role, "role": role})
            for i, (role, text) in enumerate(turns)])
        question = "How many playlists do I have on Spotify?"
        answer = memory.recall(question, top_k=5)
        best = answer.hits[0]
        assert best.chunk.document_id == f"t{len(turns) - 1}"
        keyword = pipeline.arms.keyword
        top = keyword.search(question, Filters(), 1)[0].score
        rows = keyword.row_count()
        assert rows == len(turns)
        assert best.relevance.strength == pytest.approx(keyword_strength(top, rows))
        assert best.relevance.band == "high"
        shown = memory_hit(best, explain=True).relevance_from  # what explain shows
        assert shown is not None
        assert shown["keyword_strength"] == round(best.relevance.strength, 4)
        off = memory.recall("How many largemouth bass did I catch at Lake Michigan?")
        assert off.hits == []
        assert "retrieval.relevance_floor 0.033" in off.abstained
        assert off.best_rejected is not None
        assert off.best_rejected.relevance.strength is not None
        assert off.best_rejected.relevance.strength < shipped_model().strength[1]
    finally:
        memory.close()


@pytest.mark.slow
def test_a_small_store_has_no_strength_term(tmp_path: Path) -> None:
    memory = open_memory(overrides={"data_dir": str(tmp_path / "data")}, project_root=tmp_path)
    try:
        memory.remember("I have five playlists on Spotify, mostly jazz.", scope="global")
        hits = memory.recall("How many playlists do I have on Spotify?").hits
        assert hits and hits[0].relevance.strength is None  # a run of 1: small-store term
    finally:
        memory.close()
