"""The ``fts5`` arm ranks inside FTS5 first and still returns exactly the joined statement's
ids and scores, with every filter applied before the top k is cut."""

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
from octomem.plugins.fts5 import ranking as fts5_ranking
from octomem.plugins.fts5.arm import TABLE, Fts5KeywordArm, match_expression, query_terms
from octomem.plugins.fts5.ranking import Fts5Ranker
from octomem.plugins.sqlite.storage import SqliteStorage, filter_sql

# Common words first: most documents match some query term, as with natural language.
# "run"/"running"/"runs" share the Porter stem "run": distinct phrases, one token.
COMMON = ["cell", "protein", "run", "running", "runs"]
RARE = ["kinase", "zebrafish", "telomere", "prion", "axon", "quark"]


def joined_search(storage: SqliteStorage, text: str, filters: Filters, k: int) -> list[tuple]:
    """The arm's statement before this change: filters and ranking in one joined statement."""
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


def arm_search(arm: Fts5KeywordArm, text: str, filters: Filters, k: int) -> list[tuple]:
    return [(h.chunk_id, h.score) for h in arm.search(text, filters, k)]


def add_all(storage: SqliteStorage, arm: Fts5KeywordArm, docs: Sequence[tuple[str, str]]) -> None:
    """Store and index one single-chunk document per ``(text, kind)``; ``kind`` is also a tag."""
    with storage.transaction() as tx:
        for text, kind in docs:
            doc = Document(text=text, kind=kind, tags=(kind,))
            chunk = Chunk(document_id=doc.id, ordinal=0, text=text)
            arm.index(tx, storage.add_document(tx, doc, [chunk]))


def corpus(n: int) -> list[tuple[str, str]]:
    """``n`` short texts, one in ten of kind ``fact``, common words everywhere."""
    docs = []
    for i in range(n):
        words = [COMMON[i % 2]] * (1 + i % 3) + [COMMON[2 + i % 3]]
        words += [RARE[j] for j in range(len(RARE)) if (i * (j + 3)) % 17 == 0]
        docs.append((" ".join(words + ["filler"] * (i % 5)), "note" if i % 10 else "fact"))
    return docs


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tuple[SqliteStorage, Fts5KeywordArm]]:
    storage = SqliteStorage(tmp_path / "db.sqlite3")
    try:
        arm = Fts5KeywordArm(storage)
        add_all(storage, arm, corpus(300))
        yield storage, arm
    finally:
        storage.close()


def test_scores_are_bm25_as_fts5_defines_it(tmp_path: Path) -> None:
    """Okapi BM25 with FTS5's constants k1 = 1.2, b = 0.75 and IDF ln((N - n + 0.5) / (n + 0.5))."""
    storage = SqliteStorage(tmp_path / "small.sqlite3")
    try:
        arm = Fts5KeywordArm(storage)
        texts = ["kinase cell cell", "cell", "protein", "kinase", "filler words here"]
        add_all(storage, arm, [(t, "note") for t in texts])
        n_rows, avgdl = 5, 9 / 5  # 9 tokens in 5 rows
        idf = math.log((n_rows - 2 + 0.5) / (2 + 0.5))  # "kinase" and "cell": 2 rows each

        def part(f: int, length: int) -> float:
            return idf * f * 2.2 / (f + 1.2 * (0.25 + 0.75 * length / avgdl))

        got = arm_search(arm, "kinase cell", Filters(), 10)
        assert [cid for cid, _ in got] == [1, 2, 4]  # chunk ids follow insertion order
        expected = [part(1, 3) + part(2, 3), part(1, 1), part(1, 1)]
        assert [score for _, score in got] == pytest.approx(expected, rel=1e-12)
        assert expected[0] == pytest.approx(0.2644 + 0.3896, abs=1e-4)  # by hand: idf ln 1.4
        assert got == joined_search(storage, "kinase cell", Filters(), 10)
    finally:
        storage.close()


@pytest.fixture
def joined_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The ``k`` of every call to the joined (filters inside SQL) statement."""
    calls: list[int] = []
    original = Fts5Ranker.ranked_joined

    def spy(self: Fts5Ranker, expression: str, filters: Filters, k: int,
            within: str | None = None) -> list:
        calls.append(k)
        return original(self, expression, filters, k, within)

    monkeypatch.setattr(Fts5Ranker, "ranked_joined", spy)
    return calls


def test_filters_excluding_most_rows_fall_back_to_the_joined_statement(
    store: Any, joined_calls: list[int]
) -> None:
    storage, arm = store
    only_facts = Filters(kinds=("fact",))  # 30 of 300 documents
    for query in ["kinase cell", "cell protein running", "zebrafish"]:
        for k in (1, 5, 40):
            expected = joined_search(storage, query, only_facts, k)
            assert arm_search(arm, query, only_facts, k) == expected
            assert len(expected) == min(k, len(joined_search(storage, query, only_facts, 300)))
    assert joined_calls  # the best rows were mostly notes: the filter went inside SQL
    joined_calls.clear()
    assert arm_search(arm, "cell", Filters(), 5) == joined_search(storage, "cell", Filters(), 5)
    assert joined_calls == []  # every best row passes: no join over all matching rows


def test_superseded_and_unknown_rows_are_never_returned(store: Any) -> None:
    storage, arm = store
    conn = storage.connection()
    best = [cid for cid, _ in arm_search(arm, "kinase", Filters(), 4)]
    with storage.transaction() as tx:  # retire the two best chunks, as a revision would
        tx.execute("UPDATE chunks SET valid_to = 1.0 WHERE id IN (?, ?)", best[:2])
        tx.execute(f"INSERT INTO {TABLE} (rowid, body) VALUES (100000, 'kinase kinase')")
    got = arm_search(arm, "kinase", Filters(), 4)
    assert got == joined_search(storage, "kinase", Filters(), 4)
    assert [cid for cid, _ in got][:2] == best[2:]
    assert not {best[0], best[1], 100000} & {cid for cid, _ in got}
    history = Filters(include_superseded=True)
    assert arm_search(arm, "kinase", history, 4) == joined_search(storage, "kinase", history, 4)
    assert conn.execute("SELECT count(*) FROM chunks WHERE id = 100000").fetchone() == (0,)


def test_mostly_superseded_best_rows_fall_back_to_the_joined_statement(
    store: Any, joined_calls: list[int]
) -> None:
    storage, arm = store
    best = [cid for cid, _ in arm_search(arm, "kinase", Filters(), 12)]
    with storage.transaction() as tx:
        for chunk_id in best[:11]:
            tx.execute("UPDATE chunks SET valid_to = 1.0 WHERE id = ?", (chunk_id,))
    got = arm_search(arm, "kinase", Filters(), 5)
    assert joined_calls == [5]  # none of the best 10 rows is current: the join decides
    assert got == joined_search(storage, "kinase", Filters(), 5) and len(got) == 5
    assert got[0][0] == best[11]


def test_filter_check_binds_ids_in_batches(store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    storage, arm = store
    monkeypatch.setattr(fts5_ranking, "ID_BATCH", 7)
    for k in (3, 50, 300):
        assert arm_search(arm, "cell run", Filters(), k) == joined_search(
            storage, "cell run", Filters(), k)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    docs=st.lists(
        st.tuples(
            st.lists(st.sampled_from(COMMON * 8 + RARE + ["filler"]), min_size=1, max_size=12)
            .map(" ".join),
            st.sampled_from(["note", "note", "note", "fact"]),
        ),
        min_size=1, max_size=80,
    ),
    query=st.lists(st.sampled_from(COMMON + RARE + ["absent", "the", "cell"]), min_size=1,
                   max_size=8),
    filters=st.sampled_from([
        Filters(), Filters(), Filters(as_of=1.5), Filters(include_superseded=True),
        Filters(kinds=("fact",)), Filters(tags=("fact",)), Filters(kinds=("x",)),
    ]),
    k=st.one_of(st.integers(1, 5), st.integers(1, 120)),
    retired=st.sets(st.integers(1, 80)),
)
def test_same_ids_and_scores_as_the_joined_statement(
    docs: list[tuple[str, str]], query: list[str], filters: Filters, k: int, retired: set[int],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        storage = SqliteStorage(Path(folder) / "db.sqlite3")
        try:
            arm = Fts5KeywordArm(storage)
            add_all(storage, arm, docs)
            with storage.transaction() as tx:  # superseded chunks: out of the default view
                for chunk_id in retired:
                    tx.execute("UPDATE chunks SET valid_to = 2.0 WHERE id = ?", (chunk_id,))
            text = " ".join(query)
            assert arm_search(arm, text, filters, k) == joined_search(storage, text, filters, k)
        finally:
            storage.close()
