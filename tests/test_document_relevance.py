"""A document's hit has its own relevance (SciFact-fitted weights over how far it stands
above the query's runs) and its own floor, ``retrieval.document_relevance_floor``."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from octomem.benchmarks.fit_relevance import KEEP_OWN, choose_document_floor
from octomem.engine.memory.facade import Memory, open_memory
from octomem.engine.relevance import (
    DocumentWeights,
    RelevanceModel,
    RunStats,
    relevance_of,
    run_stats,
    shipped_model,
)
from octomem.engine.settings import RetrievalSettings


def test_run_stats_and_keyword_z() -> None:
    stats = run_stats([0.5, 0.3, 0.1], [3.0, 1.0])
    assert stats.cos_mean == pytest.approx(0.3)
    assert (stats.kw_mean, stats.kw_std) == (2.0, 1.0)
    assert stats.kw_z(3.0) == 1.0
    assert stats.kw_z(None) == -2.0  # not in the keyword run: scored 0
    assert run_stats([], [4.0]) == RunStats(None, 4.0, 0.0)
    assert RunStats(None, 4.0, 0.0).kw_z(9.0) == 0.0  # no spread, no signal


def test_a_document_hit_uses_the_document_weights() -> None:
    doc = DocumentWeights(hybrid=(1.0, 2.0, 0.5, 8.0, 0.4, -5.0), keyword=(3.0, 0.5, -4.0))
    model = RelevanceModel((6.0, 6.0, 0.0, -8.0), (5.0, -4.0), "mini", doc)
    stats = run_stats([0.6, 0.4, 0.2], [6.0, 2.0])
    query, text = "where do the CI builds run", "The CI builds run on GitHub Actions"
    rel = relevance_of(query, text, 0.7, 0.07, model, "mini-v1", stats, 6.0)
    cov = rel.coverage
    assert cov == 1.0  # "ci", "build" (folded), "run": all in the text
    z = 0.7 + 2.0 * cov + 0.5 * 0.7 * cov + 8.0 * (0.7 - 0.4) + 0.4 * 1.0 - 5.0
    assert rel.probability == pytest.approx(1 / (1 + math.exp(-z)))
    assert (rel.cos_lift, rel.kw_z) == (pytest.approx(0.3), 1.0)
    assert rel.band == ("high" if rel.probability >= 0.5 else "medium")
    words = relevance_of(query, text, 0.7, 0.07, model, "other-model", stats, None)
    z = 3.0 * cov + 0.5 * -2.0 - 4.0  # not in the keyword run: kw_z (0 - 4) / 2
    assert words.probability == pytest.approx(1 / (1 + math.exp(-z)))
    assert words.cos is None and words.cos_lift is None
    turn = relevance_of(query, text, 0.7, 0.052, model, "mini-v1")  # no stats: turn weights
    assert turn.cos_lift is None and turn.kw_z is None
    assert turn.probability == pytest.approx(1 / (1 + math.exp(-(6.0 * 0.7 + 6.0 * cov - 8.0))))


def test_the_shipped_document_weights_rise_with_the_lift() -> None:
    doc = shipped_model().document
    assert doc is not None
    stats = RunStats(cos_mean=0.3, kw_mean=5.0, kw_std=2.0)
    low = relevance_of("zinc deficiency in children", "zinc in children", 0.45, 0.07,
                       embedder="fastembed:all-MiniLM-L6-v2-int8:x", stats=stats,
                       keyword_score=6.0)
    high = relevance_of("zinc deficiency in children", "zinc in children", 0.75, 0.07,
                        embedder="fastembed:all-MiniLM-L6-v2-int8:x", stats=stats,
                        keyword_score=12.0)
    assert high.probability > low.probability
    assert high.cos_lift == pytest.approx(0.45) and high.kw_z == pytest.approx(3.5)


def test_the_document_floor_keeps_the_own_questions() -> None:
    own = [0.01] + [0.3] * 19  # 95 % of them at 0.3
    assert KEEP_OWN == 0.95
    assert choose_document_floor(own, [0.1, 0.2]) == 0.3
    assert choose_document_floor([0.01] * 2 + [0.3] * 18, []) == 0.01
    with pytest.raises(ValueError, match="no own questions"):
        choose_document_floor([], [0.1])


def test_runs_are_a_background_only_when_full() -> None:
    assert run_stats([0.5, 0.3], [3.0, 1.0], k=2).background
    assert not run_stats([0.5], [3.0, 1.0], k=2).background  # the store held one chunk
    assert run_stats([], [3.0, 1.0], k=2).background  # no semantic run: the keyword run's
    assert run_stats([0.5], [], k=None).background  # k unknown: taken as full
    doc = DocumentWeights(hybrid=(1.0, 2.0, 0.5, 8.0, 0.4, -5.0), keyword=(3.0, 0.5, -4.0))
    model = RelevanceModel((6.0, 6.0, 0.0, -8.0), (5.0, -4.0), "mini", doc, unheard=-1.0)
    query, text = "where do the CI builds run", "The CI builds run on GitHub Actions"
    small = RunStats(cos_mean=0.7, kw_mean=6.0, kw_std=0.0, background=False)
    rel = relevance_of(query, text, 0.7, 0.028, model, "mini-v1", small, 6.0, unheard=1)
    assert rel.cos_lift is None and rel.kw_z is None and rel.unheard == 1  # turn weights
    assert rel.probability == pytest.approx(1 / (1 + math.exp(-(6.0 * 0.7 + 6.0 - 8.0 - 1.0))))


def _notes(tmp_path: Path) -> Path:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "ci.md").write_text("# CI\n\nThe CI builds run on GitHub Actions runners.\n",
                                 encoding="utf-8")
    (notes / "db.md").write_text("# Database\n\nWe keep the data in PostgreSQL 16.\n",
                                 encoding="utf-8")
    return notes


def test_recall_scores_files_as_documents_and_names_their_floor(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    # candidate_k and top_k 2 < the store's 3 chunks: full runs, a background (SciFact's)
    memory = open_memory(overrides={"pipeline": {"embedder": "hashing"},
                                    "retrieval": {"candidate_k": 2}},
                         project_root=tmp_path / "project", global_root=tmp_path / "global")
    try:
        memory.ingest(str(_notes(tmp_path)))
        memory.remember("The user prefers tabs", kind="PREFERENCE")
        answer = memory.recall("where do the CI builds run", top_k=2)
        first = answer.hits[0]
        assert first.chunk.kind == "DOC" and "GitHub Actions" in first.chunk.text
        assert first.relevance is not None and first.relevance.kw_z is not None
        assert first.relevance.cos is None  # the hashing embedder: keyword-only weights
        assert first.relevance.probability >= 0.07
        tabs = memory.recall("does the user prefer tabs", top_k=2).hits[0]
        assert tabs.chunk.kind == "PREFERENCE" and tabs.relevance.kw_z is None
        none = memory.recall("quantum chromodynamics lattice", top_k=2)
        assert none.hits == []
        assert none.abstained and "retrieval.document_relevance_floor 0.07" in none.abstained
    finally:
        memory.close()


def test_a_store_smaller_than_its_runs_judges_files_as_turns(
    memory: Memory, tmp_path: Path
) -> None:
    memory.ingest(str(_notes(tmp_path)))  # 2 chunks, candidate_k 100: the run is the store
    first = memory.recall("where do the CI builds run").hits[0]
    assert "GitHub Actions" in first.chunk.text
    assert first.relevance.kw_z is None and first.relevance.cos_lift is None
    assert first.relevance.probability == pytest.approx(
        1 / (1 + math.exp(-sum(w * x for w, x in zip(shipped_model().keyword, (1.0, 1.0),
                                                      strict=True)))))  # coverage 1
    none = memory.recall("quantum chromodynamics lattice")
    floor = RetrievalSettings().relevance_floor
    assert none.hits == [] and f"retrieval.relevance_floor {floor:g}" in none.abstained
