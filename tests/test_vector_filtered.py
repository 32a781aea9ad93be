"""The filtered in-RAM vector search's shortcuts stay exact: the top ``k`` cut with ties
(:mod:`octomem.plugins.sqlite_vec.top`), the kept subset's search
(:func:`octomem.plugins.sqlite_vec.scan.kept_top`) and the query checks, against a float64
scan of the chunks :meth:`Filters.matches` passes, on a real SQLite store."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from octomem.engine.types import Chunk, Document, Filters
from octomem.plugins.sqlite.storage import SqliteStorage
from octomem.plugins.sqlite_vec.arm import SqliteVecOptions, SqliteVecSemanticArm
from octomem.plugins.sqlite_vec.top import SHORT, select_top

DIM = 16
N = 600


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> tuple[SqliteStorage, np.ndarray]:
    """``N`` one-chunk documents (kinds, tags, groups, times, some superseded) whose vectors
    take only 12 directions (each up to a positive scale), so whole groups of chunks tie
    at every score and most cuts fall inside a tie."""
    rng = np.random.default_rng(7)
    storage = SqliteStorage(tmp_path_factory.mktemp("filtered") / "s.sqlite3")
    with storage.transaction() as tx:
        ids = [storage.add_document(tx, d, [Chunk(document_id=d.id, ordinal=0, text=d.text)])[0].id
               for d in (Document(text=f"doc {i}", kind=("NOTE", "ITEM", "FACT")[i % 3],
                                  tags=(f"t{i % 4}",), metadata={"group": f"g{i % 10}"},
                                  created_at=1000.0 + i) for i in range(N))]
        tx.execute("UPDATE chunks SET valid_to = 1300 WHERE id % 9 = 0")
    directions = rng.standard_normal((12, DIM)).astype(np.float32)
    vectors = directions[rng.integers(0, 12, N)] * rng.choice([1.0, 2.0, 0.5], N)[:, None]
    writer = SqliteVecSemanticArm(storage, SqliteVecOptions(scan="vec0"))
    with storage.transaction() as tx:
        writer.bind(tx, "m", DIM)
        writer.add(tx, ids, vectors.astype(np.float32))
    return storage, vectors.astype(np.float32)


def _arm(storage: SqliteStorage, scan: str = "numpy") -> SqliteVecSemanticArm:
    arm = SqliteVecSemanticArm(storage, SqliteVecOptions(scan=scan))  # type: ignore[arg-type]
    with storage.transaction() as tx:
        arm.bind(tx, "m", DIM)
    return arm


def _passing(storage: SqliteStorage, filters: Filters) -> set[int]:
    return {c.id for c in storage.iter_chunks(None) if filters.matches(c)}


def _cosines(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """float64 cosine of each chunk (ids 1..N in insertion order) with ``query``."""
    unit = vectors.astype(np.float64) / np.linalg.norm(vectors, axis=1, keepdims=True)
    return unit @ (query.astype(np.float64) / np.linalg.norm(query))


FILTERS = st.builds(
    Filters,
    kinds=st.lists(st.sampled_from(("NOTE", "ITEM", "FACT")), max_size=2).map(tuple),
    tags=st.lists(st.sampled_from(("t0", "t1", "t3")), max_size=1).map(tuple),
    metadata=st.sampled_from([{}, {"group": "g3"}, {"group": "g0"}]),
    created_after=st.none() | st.floats(990, 1600),
    as_of=st.none() | st.floats(1100, 1500),
    include_superseded=st.booleans(),
)


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(filters=FILTERS, k=st.integers(1, 120), which=st.integers(0, 11))
def test_filtered_searches_asked_again_are_the_exact_top_k_with_ties_by_id(
        store: tuple[SqliteStorage, np.ndarray], filters: Filters, k: int, which: int) -> None:
    """Every chunk :meth:`Filters.matches` passes, once, at its cosine (float64 within
    float32 rounding), ordered by score then ascending id (equal vectors tie: most cuts
    fall inside a tie); the top ``k`` is the first ``k`` of that whole list, asked three
    times (the third scores the kept subset's own vectors)."""
    storage, vectors = store
    query = vectors[which * 37 % N] + np.float32(0.01)
    arm = _arm(storage)
    whole = arm.search(query, filters, N)
    ids = [h.chunk_id for h in whole]
    assert sorted(ids) == sorted(_passing(storage, filters))
    keys = [(-h.score, h.chunk_id) for h in whole]
    assert keys == sorted(keys)
    cos = _cosines(vectors, query)
    np.testing.assert_allclose([h.score for h in whole], cos[np.asarray(ids, int) - 1],
                               atol=1e-5)
    runs = [arm.search(query, filters, k) for _ in range(3)]
    assert runs[0] == runs[1] == runs[2] == whole[:k]


def test_the_kept_search_is_used_and_gives_the_first_searchs_bits(
        store: tuple[SqliteStorage, np.ndarray]) -> None:
    storage, vectors = store
    arm = _arm(storage)
    g3 = Filters(metadata={"group": "g3"})
    first = arm.search(vectors[5], g3, 25)
    assert arm.search(vectors[5], g3, 25) == first  # the second gathers the rows
    kept = next(iter(arm._subsets[arm.bound.table].entries.values()))  # type: ignore[union-attr]
    assert kept.gathered is not None and kept.ids is not None and kept.inv_norms is not None
    matrix = arm._matrix_of(arm.bound)  # type: ignore[arg-type]
    np.testing.assert_array_equal(kept.ids, matrix.ids[kept.rows])
    np.testing.assert_array_equal(kept.inv_norms, matrix.inv_norms[kept.rows])
    for q in vectors[:20]:
        fresh = _arm(storage)
        assert arm.search(q, g3, 25) == fresh.search(q, g3, 25)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("scale", [1e-30, 1e-3, 1.0, 1e3, 1e30])
@pytest.mark.parametrize("scan", ["numpy", "vec0"])
def test_a_query_scores_alike_at_any_scale(store: tuple[SqliteStorage, np.ndarray],
                                            scale: float, scan: str) -> None:
    """A finite query whose squared norm under- or overflows float32 is scaled first: its
    hits are the unit query's (they were zeros or NaN); a zero, NaN or inf query has none."""
    storage, vectors = store
    arm = _arm(storage, scan)
    query = vectors[11] / np.linalg.norm(vectors[11])
    f = Filters(metadata={"group": "g3"})
    want = [h.chunk_id for h in arm.search(query, f, 30)]
    cos = _cosines(vectors, query)
    assert len(want) == 30 and set(want) <= _passing(storage, f)
    assert np.all(np.diff(cos[np.asarray(want) - 1]) <= 1e-6)
    got = arm.search((query.astype(np.float64) * scale).astype(np.float32), f, 30)
    assert [h.chunk_id for h in got] == want
    for bad in (np.zeros(DIM), np.full(DIM, np.nan), np.full(DIM, np.inf)):
        assert arm.search(bad.astype(np.float32), f, 30) == []


@pytest.mark.parametrize("n", [1, 7, 100, 1000, SHORT, SHORT + 1, 20_000])
@pytest.mark.parametrize("k", [1, 10, 100, 5000])
def test_select_top_is_the_first_k_by_score_then_id(n: int, k: int) -> None:
    rng = np.random.default_rng(n * 7 + k)
    scores = rng.integers(0, max(n // 20, 2), n).astype(np.float32) / 7  # many ties
    ids = rng.permutation(n * 3)[:n].astype(np.int64)
    got_ids, got_scores = select_top(scores, ids, k)
    want = np.lexsort((ids, -scores))[:k]
    np.testing.assert_array_equal(got_ids, ids[want])
    np.testing.assert_array_equal(got_scores, scores[want])
