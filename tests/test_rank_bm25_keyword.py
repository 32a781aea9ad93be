"""The ``rank-bm25`` keyword arm: BM25Okapi scores, filters before ranking, lazy rebuilds."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rank_bm25 import BM25Okapi

from octomem.engine.types import Chunk, Document, Filters
from octomem.plugins.rank_bm25.arm import RankBm25KeywordArm, make_analyzer

DOCS = [
    ("d1", "The cats are running on the mat", "NOTE", ("pets",), {"grp": "a"}),
    ("d2", "A dog runs after cats in the garden", "NOTE", ("pets", "garden"), {"grp": "b"}),
    ("d3", "Gardening with tomatoes and beans", "DOC", ("garden",), {"grp": "a"}),
    ("d4", "Bean stew recipe with tomato", "DOC", (), {"grp": "b"}),
]


def _add(
    storage: Any,
    arm: Any,
    doc_id: str,
    text: str,
    kind: str = "NOTE",
    tags: tuple[str, ...] = (),
    metadata: dict[str, str] | None = None,
) -> None:
    doc = Document(
        text=text, id=doc_id, kind=kind, tags=tags, metadata=metadata or {}, created_at=1.0
    )
    with storage.transaction() as tx:
        stored = storage.add_document(tx, doc, [Chunk(document_id=doc_id, ordinal=0, text=text)])
        arm.index(tx, stored)


@pytest.fixture
def arm_and_storage(build_arm: Callable[..., Any]) -> tuple[RankBm25KeywordArm, Any]:
    storage = build_arm("storage", "sqlite")
    arm = build_arm("keyword", "rank-bm25", storage=storage)
    for doc_id, text, kind, tags, meta in DOCS:
        _add(storage, arm, doc_id, text, kind, tags, meta)
    return arm, storage


def _doc_ids(storage: Any, run: list[Any]) -> list[str]:
    return [c.document_id for c in storage.get_chunks([h.chunk_id for h in run])]


def test_okapi_scores_are_bm25okapis_own(build_arm: Callable[..., Any]) -> None:
    from octomem.plugins.rank_bm25.arm import RankBm25Options

    storage = build_arm("storage", "sqlite")
    arm = RankBm25KeywordArm(storage, RankBm25Options(idf="okapi"))
    for doc_id, text, kind, tags, meta in DOCS:
        _add(storage, arm, doc_id, text, kind, tags, meta)
    analyze = make_analyzer("porter")
    tokens = [analyze(text) for _, text, *_ in DOCS]
    reference = BM25Okapi(tokens, k1=1.2, b=0.75, epsilon=0.25)
    terms = arm.query_terms("cats running in the garden")
    assert terms == ["cat", "run", "garden"]  # stemmed; "in", "the" are stop words
    expected = dict(zip([d[0] for d in DOCS], reference.get_scores(terms), strict=True))
    matching = {d[0] for d, toks in zip(DOCS, tokens, strict=True) if set(terms) & set(toks)}
    run = arm.search("cats running in the garden", Filters(), 10)
    got = dict(zip(_doc_ids(storage, run), [h.score for h in run], strict=True))
    assert got == pytest.approx({d: s for d, s in expected.items() if d in matching})
    assert set(got) == {"d1", "d2", "d3"}  # d3 matches "garden" whose idf is ln(1) = 0 here
    assert [h.rank for h in run] == list(range(1, len(run) + 1))
    assert all(a.score >= b.score for a, b in zip(run, run[1:], strict=False))
    assert {h.arm for h in run} == {"rank-bm25"}


def test_default_idf_is_floored_like_fts5(arm_and_storage: tuple[Any, Any]) -> None:
    from octomem.plugins.rank_bm25.arm import FTS5_IDF_FLOOR

    arm, storage = arm_and_storage
    run = arm.search("cats running in the garden", Filters(), 10)
    assert set(_doc_ids(storage, run)) == {"d1", "d2", "d3"}
    assert all(h.score > 0 for h in run)  # "garden" (2 of 4 chunks) gets idf 1e-6, not 0
    assert arm._model.idf["garden"] == FTS5_IDF_FLOOR


def test_filters_apply_before_ranking(arm_and_storage: tuple[Any, Any]) -> None:
    arm, storage = arm_and_storage
    assert _doc_ids(storage, arm.search("garden tomato", Filters(kinds=("DOC",)), 1)) == ["d3"]
    assert set(_doc_ids(storage, arm.search("cats", Filters(metadata={"grp": "b"}), 5))) == {"d2"}
    assert set(_doc_ids(storage, arm.search("garden", Filters(tags=("pets", "garden")), 5))) == {
        "d2"
    }
    assert arm.search("cats", Filters(metadata={"grp": "zzz"}), 5) == []


@pytest.mark.parametrize(
    "text", ['"', "NEAR(a b", "* OR AND", "", "   ", "🙂", "a\x00b", "the of and"]
)
def test_any_text_is_a_valid_query(arm_and_storage: tuple[Any, Any], text: str) -> None:
    arm, _ = arm_and_storage
    assert arm.search(text, Filters(), 5) == []


def test_rebuilds_after_writes_and_deletes(arm_and_storage: tuple[Any, Any]) -> None:
    arm, storage = arm_and_storage
    assert arm.search("zucchini", Filters(), 5) == []
    _add(storage, arm, "d5", "Zucchini soup")
    assert _doc_ids(storage, arm.search("zucchini", Filters(), 5)) == ["d5"]
    with storage.transaction() as tx:
        removed = storage.delete_document(tx, "d5")
        arm.remove(tx, removed)
    assert arm.search("zucchini", Filters(), 5) == []


def test_sees_writes_made_by_another_arm_instance(
    arm_and_storage: tuple[Any, Any], build_arm: Callable[..., Any]
) -> None:
    arm, storage = arm_and_storage
    arm.search("cats", Filters(), 5)
    other = build_arm("keyword", "rank-bm25", storage=storage)
    _add(storage, other, "d6", "Okra curry")  # only ``other`` is told; counts change
    assert _doc_ids(storage, arm.search("okra", Filters(), 5)) == ["d6"]


def test_k_limits_and_ties_break_by_chunk_id(arm_and_storage: tuple[Any, Any]) -> None:
    arm, storage = arm_and_storage
    _add(storage, arm, "t1", "quince")
    _add(storage, arm, "t2", "quince")
    run = arm.search("quince", Filters(), 1)
    assert len(run) == 1 and _doc_ids(storage, run) == ["t1"]


def test_without_stemmer(build_arm: Callable[..., Any]) -> None:
    from octomem.plugins.rank_bm25.arm import RankBm25Options

    storage = build_arm("storage", "sqlite")
    arm = RankBm25KeywordArm(storage, RankBm25Options(stemmer=None))
    _add(storage, arm, "x", "running cats")
    assert arm.query_terms("Running CATS") == ["running", "cats"]
    assert arm.search("run", Filters(), 5) == []
    assert len(arm.search("running", Filters(), 5)) == 1


def test_superseded_chunks_stay_out_of_the_default_view(arm_and_storage: tuple[Any, Any]) -> None:
    arm, storage = arm_and_storage
    arm.search("cats", Filters(), 5)  # built before the revision
    new = Document(text="The dogs are sleeping on the mat", id="d1", kind="NOTE", created_at=2.0)
    with storage.transaction() as tx:
        stored, _ = storage.revise_document(
            tx, new, [Chunk(document_id="d1", ordinal=0, text=new.text)]
        )
        arm.index(tx, stored)
    current = _doc_ids(storage, arm.search("cats running", Filters(), 5))
    assert "d1" not in current  # the old text of d1 is superseded
    everything = _doc_ids(storage, arm.search("cats running", Filters(include_superseded=True), 5))
    assert "d1" in everything


def test_a_possessive_is_not_a_match(build_arm: Callable[..., Any]) -> None:
    """As ``fts5``: the "s" of "user's" is no query word (trial 21 F4)."""
    storage = build_arm("storage", "sqlite")
    arm = build_arm("keyword", "rank-bm25", storage=storage)
    texts = ["The user's manager is Tom Okafor", "The user works as a nurse",
             "The user lives in Lisbon", "The user's dog is called Biscuit"]
    for i, text in enumerate(texts):
        _add(storage, arm, f"p{i}", text)
    assert arm.query_terms("what is the user's job?") == ["what", "user", "job"]
    assert _doc_ids(storage, arm.search("what is the user's job?", Filters(), 4))[0] == "p2"
