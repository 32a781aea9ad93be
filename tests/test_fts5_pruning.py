"""Bound-based pruning of the ``fts5`` arm returns exactly the plain ranking's ids and scores."""

from __future__ import annotations

import math
import random
import tempfile
from collections.abc import Sequence
from pathlib import Path

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from octomem.engine.types import Filters
from octomem.plugins.fts5 import pruning as fts5_pruning
from octomem.plugins.fts5.arm import Fts5KeywordArm, Fts5Options
from octomem.plugins.fts5.bounds import MAX_PHRASES, bound_filter, idf, upper_bound
from octomem.plugins.fts5.ranking import Fts5Ranker
from octomem.plugins.sqlite.storage import SqliteStorage
from tests.test_fts5_ranking import COMMON, RARE, add_all, arm_search, corpus, joined_search


@pytest.fixture
def always_prune(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """Lift the measured gates so small test indexes take the pruned path; spy on it."""
    monkeypatch.setattr(fts5_pruning, "MIN_INDEX_ROWS", 0)
    monkeypatch.setattr(fts5_pruning, "MIN_ROWS", 0)
    monkeypatch.setattr(fts5_pruning, "MAX_K", 10_000)
    monkeypatch.setattr(fts5_pruning, "PRUNE_FRACTION", 1.0)
    calls: list[str | None] = []
    top = Fts5Ranker.top

    def spy(self: Fts5Ranker, expression: str, filters: Filters, k: int,
            within: str | None = None) -> list[tuple[int, float]]:
        calls.append(within)
        return top(self, expression, filters, k, within)

    monkeypatch.setattr(Fts5Ranker, "top", spy)
    return calls


def test_idf_and_bound_follow_fts5_formula() -> None:
    assert idf(100, 10) == pytest.approx(math.log(90.5 / 10.5))
    assert idf(100, 10) == pytest.approx(2.1539745935)
    assert idf(10, 8) == 1e-6  # ln(2.5 / 8.5) < 0: FTS5 floors the IDF at 1e-6
    assert upper_bound(100, 10) == pytest.approx(2.1539745935 * 2.2)
    assert upper_bound(100, 10) > 2.1539745935 * 2.2  # widened by SLACK
    assert upper_bound(100, 0) == 0.0  # a phrase in no row adds nothing to any score


def test_every_contribution_is_below_its_bound(tmp_path: Path) -> None:
    storage = SqliteStorage(tmp_path / "db.sqlite3")
    try:
        arm = Fts5KeywordArm(storage)
        add_all(storage, arm, corpus(60) + [("kinase " * 40, "note")])  # tf = 40
        ranker = Fts5Ranker(storage.connection(), "fts5_chunks")
        assert ranker.row_count() == 61
        for word in COMMON + RARE:
            (n_hit,) = ranker.phrase_hits([f'"{word}"'])
            best = ranker.top(f'"{word}"', Filters(), 1)
            if n_hit:
                assert 0 < best[0][1] < upper_bound(61, n_hit)
    finally:
        storage.close()


def test_bound_filter_for_known_bounds() -> None:
    n_rows, hits = 1000, [10, 100, 500]
    bounds = [upper_bound(n_rows, n) for n in hits]  # ~10.1, ~4.83, ~2.2e-6
    assert bounds[0] > bounds[1] + bounds[2] and bounds[1] > bounds[2]
    phrases = ['"rare"', '"mid"', '"common"']
    only_rare = bound_filter(phrases, hits, n_rows, bounds[1] + bounds[2] + 0.1)
    assert only_rare is not None and only_rare.expression == '"rare"'
    assert only_rare.rows == 10.0 and only_rare.phrases == 1
    mid_and_common = bound_filter(phrases, hits, n_rows, bounds[1] + bounds[2] / 2)
    assert mid_and_common is not None
    assert mid_and_common.expression == '("rare" OR ("mid" AND "common"))'
    assert mid_and_common.rows == pytest.approx(10 + 100 * 500 / 1000 - 10 * 50 / 1000)
    assert bound_filter(phrases, hits, n_rows, 0.0) is None  # every row qualifies
    assert bound_filter(phrases, hits, n_rows, sum(bounds) * 2) is None  # no row does


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(st.sets(st.integers(0, 11), min_size=1), min_size=1, max_size=60),
    tau_fraction=st.floats(0.01, 1.0),
)
def test_bound_filter_keeps_every_row_that_can_reach_tau(
    docs: list[set[int]], tau_fraction: float
) -> None:
    words = [f"w{i}" for i in range(12)]
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(body)")
    for rowid, doc in enumerate(docs, 1):
        conn.execute("INSERT INTO t (rowid, body) VALUES (?, ?)",
                     (rowid, " ".join(words[i] for i in sorted(doc))))
    phrases = [f'"{w}"' for w in words]
    hits = [sum(i in doc for doc in docs) for i in range(12)]
    bounds = [upper_bound(len(docs), n) for n in hits]
    tau = tau_fraction * max(sum(bounds[i] for i in doc) for doc in docs)
    found = bound_filter(phrases, hits, len(docs), tau)
    must = {r for r, doc in enumerate(docs, 1) if sum(bounds[i] for i in doc) >= tau}
    if found is None:  # every row qualifies, or none: nothing to prune
        assert must in (set(), set(range(1, len(docs) + 1)))
        return
    assert found.phrases <= MAX_PHRASES
    matched = {r for (r,) in conn.execute("SELECT rowid FROM t WHERE t MATCH ?",
                                          (found.expression,))}
    assert must <= matched


def test_pruning_ranks_fewer_rows_and_returns_the_same_hits(
    tmp_path: Path, always_prune: list[str | None]
) -> None:
    storage = SqliteStorage(tmp_path / "db.sqlite3")
    try:
        arm = Fts5KeywordArm(storage)
        add_all(storage, arm, corpus(300))
        for query, k in [("kinase cell protein", 5), ("zebrafish telomere run", 3)]:
            always_prune.clear()
            got = arm_search(arm, query, Filters(), k)
            assert got == joined_search(storage, query, Filters(), k) and len(got) == k
            assert always_prune[-1] is not None  # the last ranking was the restricted one
    finally:
        storage.close()


def test_measured_gates_keep_small_indexes_and_large_k_unpruned(tmp_path: Path) -> None:
    storage = SqliteStorage(tmp_path / "db.sqlite3")
    try:
        arm = Fts5KeywordArm(storage)
        add_all(storage, arm, corpus(300))
        calls: list[int] = []
        ranker = Fts5Ranker(storage.connection(), "fts5_chunks")
        ranker.phrase_hits = lambda phrases: calls.append(1) or [0] * len(phrases)  # type: ignore
        phrases = ['"kinase"', '"cell"']
        expected = joined_search(storage, "kinase cell", Filters(), 5)
        assert fts5_pruning.pruned_top(ranker, phrases, Filters(), 5) == expected  # 300 rows
        assert fts5_pruning.pruned_top(ranker, phrases, Filters(), 31) == joined_search(
            storage, "kinase cell", Filters(), 31)
        assert calls == []  # nothing was counted: the plain ranking ran directly
    finally:
        storage.close()


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 10**6),
    n_docs=st.integers(1, 120),
    query=st.lists(st.sampled_from(COMMON + RARE + ["absent", "the"]), min_size=1, max_size=8),
    filters=st.sampled_from([Filters(), Filters(kinds=("fact",)), Filters(kinds=("x",))]),
    k=st.one_of(st.integers(1, 5), st.integers(1, 130)),
)
def test_pruned_search_equals_the_joined_statement(
    always_prune: list[str | None], seed: int, n_docs: int, query: list[str],
    filters: Filters, k: int,
) -> None:
    rnd = random.Random(seed)
    weights = [40] * len(COMMON) + [3] * len(RARE)  # Zipf-like: a few words everywhere
    docs = [(" ".join(rnd.choices(COMMON + RARE, weights, k=rnd.randint(1, 12))),
             rnd.choice(["note", "note", "fact"])) for _ in range(n_docs)]
    with tempfile.TemporaryDirectory() as folder:
        storage = SqliteStorage(Path(folder) / "db.sqlite3")
        try:
            arm = Fts5KeywordArm(storage)
            add_all(storage, arm, docs)
            text = " ".join(query)
            expected = joined_search(storage, text, filters, k)
            assert arm_search(arm, text, filters, k) == expected
            off = Fts5KeywordArm(storage, Fts5Options(pruning=False))
            assert arm_search(off, text, filters, k) == expected
        finally:
            storage.close()


def test_falls_back_to_the_plain_ranking_when_the_bound_check_fails(
    always_prune: list[str | None],
) -> None:
    class Fake:
        """The probe promises tau = 10; the restricted ranking finds nothing that high."""

        def row_count(self) -> int:
            return 1000

        def phrase_hits(self, phrases: Sequence[str]) -> list[int]:
            return [1, 900]  # bounds ~14.3 and ~2.2e-6

        def top(self, expression: str, filters: Filters, k: int,
                within: str | None = None) -> list[tuple[int, float]]:
            always_prune.append(within)
            if within is not None:
                return [(3, 1.0)]
            return [(3, 10.0)] if " OR " not in expression else [(7, 60.0)]

    assert fts5_pruning.pruned_top(Fake(), ['"a"', '"b"'], Filters(), 1) == [(7, 60.0)]
    assert always_prune == [None, '"a"', None]  # probe, restricted, plain


def test_cached_phrase_counts_follow_every_write(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    storage, other = SqliteStorage(path), SqliteStorage(path)
    try:
        arm = Fts5KeywordArm(storage)
        add_all(storage, arm, [("kinase cell", "note"), ("cell", "note")])
        ranker = Fts5Ranker(storage.connection(), "fts5_chunks")
        assert ranker.phrase_hits(['"kinase"', '"cell"', '"kinase"']) == [1, 2, 1]
        add_all(storage, arm, [("kinase", "note")])  # through this connection
        assert ranker.phrase_hits(['"kinase"', '"cell"']) == [2, 2]
        add_all(other, Fts5KeywordArm(other), [("kinase cell", "note")])  # another one
        assert ranker.phrase_hits(['"kinase"', '"cell"']) == [3, 3]
        with storage.transaction() as tx:
            arm.remove(tx, [1])
        assert ranker.phrase_hits(['"kinase"', '"cell"']) == [2, 2]
        assert ranker.row_count() == 3
    finally:
        other.close()
        storage.close()
