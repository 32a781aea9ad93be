"""The ``fts5`` arm's pruned search returns exactly the plain FTS5 statement's ids and scores."""

from __future__ import annotations

import math
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from octomem.engine.types import Chunk, Document, Filters
from octomem.plugins import fts5_pruning
from octomem.plugins.fts5_keyword import (
    TABLE,
    Fts5KeywordArm,
    Fts5Options,
    match_expression,
    query_terms,
)
from octomem.plugins.fts5_pruning import essential_count, idf, tail_bound, upper_bound
from octomem.plugins.fts5_ranking import Fts5Ranker
from octomem.plugins.sqlite_storage import SqliteStorage, filter_sql

# Word frequencies from very common to rare, so that MaxScore has a tail to prune.
# "run"/"running"/"runs" share the Porter stem "run": distinct phrases, same token.
COMMON = ["cell", "protein", "run", "running", "runs"]
RARE = ["kinase", "zebrafish", "telomere", "prion", "axon", "quark"]
WORDS = COMMON + RARE


def plain_search(storage: SqliteStorage, text: str, filters: Filters, k: int) -> list[tuple]:
    """The arm's statement before pruning: filters and ranking in one joined statement."""
    terms = query_terms(text)
    if not terms:
        return []
    where, params = filter_sql(filters, "c")
    rows = storage.connection().execute(
        f"SELECT c.id, -bm25({TABLE}) AS score FROM {TABLE} "
        f"JOIN chunks AS c ON c.id = {TABLE}.rowid "
        f"WHERE {TABLE} MATCH ? AND {where} ORDER BY score DESC, c.id LIMIT ?",
        [match_expression(terms), *params, int(k)],
    ).fetchall()
    return [(int(cid), float(score)) for cid, score in rows]


def pruned_search(arm: Fts5KeywordArm, text: str, filters: Filters, k: int) -> list[tuple]:
    return [(h.chunk_id, h.score) for h in arm.search(text, filters, k)]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tuple[SqliteStorage, Fts5KeywordArm]]:
    storage = SqliteStorage(tmp_path / "db.sqlite3")
    try:
        yield storage, Fts5KeywordArm(storage)
    finally:
        storage.close()


def add_all(storage: SqliteStorage, arm: Fts5KeywordArm, docs: Sequence[tuple[str, str]]) -> None:
    """Store one single-chunk document per ``(text, kind)`` and index it."""
    with storage.transaction() as tx:
        for text, kind in docs:
            doc = Document(text=text, kind=kind, tags=(kind,))
            chunk = Chunk(document_id=doc.id, ordinal=0, text=text)
            arm.index(tx, storage.add_document(tx, doc, [chunk]))


def skewed_corpus(n: int) -> list[tuple[str, str]]:
    """``n`` short texts: common words in most, each rare word in a few (deterministic)."""
    docs = []
    for i in range(n):
        words = [COMMON[i % 2]] * (1 + i % 3) + [COMMON[2 + i % 3]]
        words += [RARE[j] for j in range(len(RARE)) if (i * (j + 3)) % 17 == 0]
        docs.append((" ".join(words + ["filler"] * (i % 5)), "note" if i % 10 else "fact"))
    return docs


def test_idf_and_bound_follow_fts5_formula() -> None:
    assert idf(100, 10) == pytest.approx(math.log(90.5 / 10.5))
    assert idf(100, 10) == pytest.approx(2.1539745935)
    assert idf(10, 8) == 1e-6  # ln(2.5 / 8.5) < 0: FTS5 floors the IDF at 1e-6
    assert upper_bound(100, 10) == pytest.approx(2.1539745935 * 2.2)
    assert upper_bound(100, 0) == 0.0  # a phrase in no row adds nothing to any score


def test_essential_count_keeps_the_shortest_prefix_whose_tail_is_below_theta() -> None:
    bounds = [10.0, 5.0, 3.0, 1.0]
    assert essential_count(bounds, theta=5.0) == 2  # tail 3 + 1 = 4 < 5
    assert essential_count(bounds, theta=4.0) == 3  # 4 is not below 4: no tie may be lost
    assert essential_count(bounds, theta=100.0) == 1
    assert essential_count(bounds, theta=-math.inf) == 4
    assert tail_bound(bounds, 2) == pytest.approx(4.0) and tail_bound(bounds, 2) > 4.0


def test_every_contribution_is_below_its_bound(store: Any) -> None:
    storage, arm = store
    add_all(storage, arm, skewed_corpus(60))
    ranker = Fts5Ranker(storage.connection(), TABLE)
    n_rows = ranker.row_count()
    assert n_rows == 60
    for word in WORDS:
        (n_hit,) = ranker.phrase_hits([f'"{word}"'])
        best = ranker.top(f'"{word}"', Filters(include_superseded=True), 1)
        if n_hit:
            assert 0 < best[0][1] < upper_bound(n_rows, n_hit)


def test_row_count_follows_deletes(store: Any) -> None:
    storage, arm = store
    add_all(storage, arm, [("alpha beta", "note"), ("beta gamma", "note"), ("gamma", "note")])
    with storage.transaction() as tx:
        arm.remove(tx, [1])
    ranker = Fts5Ranker(storage.connection(), TABLE)
    assert ranker.row_count() == 2
    assert ranker.phrase_hits(['"beta"', '"gamma"', '"alpha"']) == [1, 2, 0]


def test_pruning_skips_rows_and_keeps_the_same_hits(store: Any, monkeypatch: Any) -> None:
    storage, arm = store
    add_all(storage, arm, skewed_corpus(300))
    calls: list[str | None] = []
    top = Fts5Ranker.top

    def spy(self: Fts5Ranker, expression: str, filters: Filters, k: int,
            essential: str | None = None) -> list[tuple[int, float]]:
        calls.append(essential)
        return top(self, expression, filters, k, essential)

    monkeypatch.setattr(Fts5Ranker, "top", spy)
    query = "kinase cell protein"
    got = pruned_search(arm, query, Filters(), 5)
    assert got == plain_search(storage, query, Filters(), 5)
    assert len(got) == 5
    assert calls[-1] == '"kinase"'  # only rows with the rare word were scored


def test_filters_excluding_most_best_rows_fall_back_inside_sql(store: Any) -> None:
    storage, arm = store
    add_all(storage, arm, skewed_corpus(300))
    only_facts = Filters(kinds=("fact",))  # 1 in 10 documents
    for query in ["kinase cell", "cell protein running", "zebrafish"]:
        for k in (1, 5, 40):
            expected = plain_search(storage, query, only_facts, k)
            assert pruned_search(arm, query, only_facts, k) == expected
            assert len(expected) == min(k, len(plain_search(storage, query, only_facts, 1000)))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    docs=st.lists(
        st.tuples(
            st.lists(st.sampled_from(COMMON * 8 + RARE + ["filler"]), min_size=1, max_size=12)
            .map(" ".join),
            st.sampled_from(["note", "fact"]),
        ),
        min_size=1, max_size=80,
    ),
    query=st.lists(st.sampled_from(WORDS + ["absent", "the"]), min_size=1, max_size=8),
    kinds=st.sampled_from([(), ("fact",), ("missing",)]),
    k=st.one_of(st.integers(1, 5), st.integers(1, 90)),
)
def test_pruned_search_equals_plain_statement(
    docs: list[tuple[str, str]], query: list[str], kinds: tuple[str, ...], k: int,
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        storage = SqliteStorage(Path(folder) / "db.sqlite3")
        try:
            arm = Fts5KeywordArm(storage)
            add_all(storage, arm, docs)
            text = " ".join(query)
            filters = Filters(kinds=kinds)
            expected = plain_search(storage, text, filters, k)
            assert pruned_search(arm, text, filters, k) == expected
            plain_arm = Fts5KeywordArm(storage, Fts5Options(pruning=False))
            assert pruned_search(plain_arm, text, filters, k) == expected
        finally:
            storage.close()


def test_maxscore_falls_back_when_the_tail_check_fails() -> None:
    class Fake:
        """Bounds say prune, but the restricted ranking finds too few hits."""

        def __init__(self) -> None:
            self.plain_calls = 0

        def row_count(self) -> int:
            return 1000

        def phrase_hits(self, phrases: Sequence[str]) -> list[int]:
            return [1, 900]

        def top(self, expression: str, filters: Filters, k: int,
                essential: str | None = None) -> list[tuple[int, float]]:
            if essential is None and " OR " in expression:
                self.plain_calls += 1
                return [(7, 1.0)]
            return [(3, 50.0)] if essential is None else []

    fake = Fake()
    assert fts5_pruning.maxscore_top(fake, ['"a"', '"b"'], Filters(), 1) == [(7, 1.0)]
    assert fake.plain_calls == 1
