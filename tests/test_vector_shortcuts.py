"""The vector arm's per-search shortcuts give the answers of the longer paths they replace:
kept filter subsets (:mod:`octomem.plugins.sqlite_vec.subsets`), scores of kept gathered
rows, one change-log read for both copies, and hits built by :func:`run_of`."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from octomem.engine.types import Chunk, Document, Filters, FusedHit, Hit, fused_hit, run_of
from octomem.plugins.sqlite.storage import SqliteStorage
from octomem.plugins.sqlite_vec.arm import SqliteVecOptions, SqliteVecSemanticArm
from octomem.plugins.sqlite_vec.row_gather import gather, gathered_scores, new_buffer, scores_of
from octomem.plugins.sqlite_vec.subsets import filters_key

DIM = 48


def _store(path: Path, n: int) -> tuple[SqliteStorage, np.ndarray]:
    """``n`` one-chunk documents (kinds, tags, a metadata group) with random vectors,
    some of them equal (ties), written through a vec0 arm."""
    rng = np.random.default_rng(3)
    storage = SqliteStorage(path)
    with storage.transaction() as tx:
        ids = [storage.add_document(tx, d, [Chunk(document_id=d.id, ordinal=0, text=d.text)])[0].id
               for d in (Document(text=f"doc {i}", kind=("NOTE", "ITEM")[i % 2],
                                  tags=(f"t{i % 3}",), metadata={"group": f"g{i % 10}"},
                                  created_at=1000.0 + i) for i in range(n))]
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    vectors[1::50] = vectors[0]  # equal vectors: equal scores, ties broken by id
    writer = SqliteVecSemanticArm(storage, SqliteVecOptions(scan="vec0"))
    with storage.transaction() as tx:
        writer.bind(tx, "m", DIM)
        writer.add(tx, ids, vectors)
    return storage, vectors


def _arm(storage: SqliteStorage, cache_mb: float) -> SqliteVecSemanticArm:
    arm = SqliteVecSemanticArm(storage, SqliteVecOptions(scan="numpy", filter_cache_mb=cache_mb))
    with storage.transaction() as tx:
        arm.bind(tx, "m", DIM)
    return arm


FILTERS = [Filters(), Filters(metadata={"group": "g3"}), Filters(kinds=("NOTE",)),
           Filters(metadata={"group": "g3"}, tags=("t1",)), Filters(tags=("t2",)),
           Filters(created_after=1000.0 + 900), Filters(metadata={"group": "absent"})]  # 3 gather


def test_kept_subsets_give_the_answers_of_a_search_that_keeps_nothing(tmp_path: Path) -> None:
    """Every filter asked three times with the subsets kept (64 MB) equals, hit for hit
    (ids, scores bit for bit, ranks), an arm that keeps no gathered rows and a fresh arm
    per search; and a write in between is seen by both."""
    storage, _ = _store(tmp_path / "s.sqlite3", 2000)
    kept, bare = _arm(storage, 64.0), _arm(storage, 0.0)
    queries = np.random.default_rng(4).standard_normal((6, DIM)).astype(np.float32)
    for _ in range(3):
        for f in FILTERS:
            for q in queries:
                want = _arm(storage, 0.0).search(q, f, 100)
                assert kept.search(q, f, 100) == want == bare.search(q, f, 100)
    cache = kept._subsets[kept.bound.table]  # type: ignore[union-attr]
    gathered = [s for s in cache.entries.values() if s.gathered is not None]
    assert len(gathered) == 3 and cache.held == sum(s.nbytes for s in cache.entries.values())
    kinds = cache.entries[filters_key(FILTERS[2])]  # not selective: mask and rows, counted
    assert kinds.gathered is None and kinds.nbytes == 2000 + 8 * 1000
    assert cache.entries[filters_key(FILTERS[0])].mask is None
    once = Filters(metadata={"group": "g7"})  # asked once: no copy made
    assert kept.search(queries[0], once, 10) == bare.search(queries[0], once, 10)
    assert cache.entries[filters_key(once)].gathered is None
    other = SqliteStorage(tmp_path / "s.sqlite3")  # another connection moves g3's rows
    with other.transaction() as tx:
        tx.execute("UPDATE chunks SET metadata = '{\"group\": \"g3\"}' WHERE id % 10 = 5")
    q = queries[0]
    got = kept.search(q, FILTERS[1], 200)
    assert got == _arm(storage, 0.0).search(q, FILTERS[1], 200)
    assert {h.chunk_id % 10 for h in got} == {4, 5}  # ids start at 1: group g3 is id % 10 == 4
    assert len(cache.entries) == 1  # the state moved: the old subsets were dropped


def test_the_budget_bounds_the_kept_vectors(tmp_path: Path) -> None:
    storage, _ = _store(tmp_path / "s.sqlite3", 2000)
    one = (200 + 4) * DIM * 4 / 2**20  # room for one 10 % subset's rows, not two
    arm = _arm(storage, one * 1.5)
    q = np.ones(DIM, dtype=np.float32)
    groups = [Filters(metadata={"group": f"g{g}"}) for g in range(4)]
    for f in groups:
        for _ in range(2):  # the second search of a filter gathers its rows
            assert arm.search(q, f, 50) == _arm(storage, 0.0).search(q, f, 50)
    cache = arm._subsets[arm.bound.table]  # type: ignore[union-attr]
    assert cache.held <= cache.budget and sum(s.gathered is not None
                                              for s in cache.entries.values()) == 1
    assert cache.entries[filters_key(groups[-1])].gathered is not None  # the newest kept
    nothing = _arm(storage, 0.0)  # 0 MB: nothing but the unfiltered entry (0 bytes) kept
    for f in [*groups, Filters()]:
        assert nothing.search(q, f, 50) == arm.search(q, f, 50)
    empty = nothing._subsets[nothing.bound.table]  # type: ignore[union-attr]
    assert empty.held == 0 and list(empty.entries) == [filters_key(Filters())]


@pytest.mark.parametrize("size", [1, 3, 4, 5, 1023, 1024, 1025, 2051, 3000])
def test_scores_of_kept_rows_are_the_gathered_scores_bit_for_bit(size: int) -> None:
    rng = np.random.default_rng(size)
    rows_major = rng.standard_normal((3000, 384)).astype(np.float32)
    query = rng.standard_normal(384).astype(np.float32)
    rows = np.sort(rng.choice(3000, size, replace=False))
    kept = gather(rows_major, rows)
    assert kept.shape == (-(-size // 4) * 4, 384) and not kept[size:].any()
    np.testing.assert_array_equal(kept[:size], rows_major[rows])
    want = gathered_scores(rows_major, rows, query, new_buffer(384))
    np.testing.assert_array_equal(scores_of(kept, size, query), want)


def test_filters_key_tells_filters_apart_and_equal_ones_alike() -> None:
    keys = {filters_key(f) for f in FILTERS}
    assert len(keys) == len(FILTERS)
    assert filters_key(Filters(metadata={"a": "1", "b": "2"})) == filters_key(
        Filters(metadata={"b": "2", "a": "1"}))
    assert filters_key(Filters(as_of=5.0)) != filters_key(Filters(as_of=6.0))
    assert filters_key(Filters(include_superseded=True)) != filters_key(Filters())


def test_run_of_builds_the_hits_the_constructor_builds() -> None:
    ids, scores = [7, 3, 9], [0.5, 0.25, -1.0]
    got = run_of(ids, scores, "sqlite-vec")
    want = [Hit(c, s, r, "sqlite-vec") for r, (c, s) in enumerate(zip(ids, scores, strict=True), 1)]
    assert got == want and [repr(h) for h in got] == [repr(h) for h in want]
    assert [hash(h) for h in got] == [hash(h) for h in want]
    with pytest.raises(dataclasses.FrozenInstanceError):
        got[0].rank = 5  # type: ignore[misc]
    assert run_of([], [], "x") == []
    # a tuple since December 2, still taken by dataclasses' functions as the dataclass was
    assert dataclasses.replace(got[1], rank=9) == Hit(3, 0.25, 9, "sqlite-vec")
    assert dataclasses.asdict(got[0]) == {"chunk_id": 7, "score": 0.5, "rank": 1,
                                          "arm": "sqlite-vec"}
    assert [f.name for f in dataclasses.fields(Hit)] == ["chunk_id", "score", "rank", "arm"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del got[0].arm  # type: ignore[misc]


def test_fused_hit_is_the_constructors_hit() -> None:
    chunk = Chunk(document_id="d", ordinal=0, text="some words", id=4)
    contributions = {"fts5": Hit(4, 2.5, 1, "fts5"), "sqlite-vec": Hit(4, 0.75, 3, "sqlite-vec")}
    for relevance in (None, 0.5):
        got = fused_hit(chunk, 0.03, 2, contributions, relevance)
        want = FusedHit(chunk, 0.03, 2, contributions, relevance)
        assert got == want and repr(got) == repr(want)
        assert dataclasses.replace(want, rank=1) == fused_hit(chunk, 0.03, 1, contributions,
                                                             relevance)
    assert fused_hit(chunk, 0.1, 1, {}) == FusedHit(chunk, 0.1, 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.rank = 5  # type: ignore[misc]
