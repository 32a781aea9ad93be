"""The ``sqlite-vec`` arm's numpy scan: same answers as vec0's KNN, and in step with every write."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from octomem.engine.types import Chunk, Document, Filters
from octomem.plugins.sqlite import changelog as vector_log
from octomem.plugins.sqlite.storage import SqliteStorage
from octomem.plugins.sqlite_vec import matrix as matrix_module
from octomem.plugins.sqlite_vec.arm import SqliteVecOptions, SqliteVecSemanticArm
from octomem.plugins.sqlite_vec.matrix import GATHER_SHARE, VectorMatrix, top_rows
from octomem.plugins.sqlite_vec.row_gather import gathered_scores, new_buffer

DIM = 8
KINDS = ("memory", "knowledge", "note")


def _store(path: Path, n: int, seed: int = 0) -> tuple[SqliteStorage, list[int], np.ndarray]:
    """A storage with ``n`` one-chunk documents of mixed kinds, tags and times, with vectors."""
    rng = np.random.default_rng(seed)
    storage = SqliteStorage(path)
    ids = []
    with storage.transaction() as tx:
        for i in range(n):
            doc = Document(text=f"doc {i}", kind=KINDS[i % 3], tags=["even"] if i % 2 == 0 else [],
                           metadata={"group": i % 4}, created_at=1000.0 + i)
            chunk = Chunk(document_id=doc.id, ordinal=0, text=doc.text)
            ids.append(storage.add_document(tx, doc, [chunk])[0].id)
        tx.execute("UPDATE chunks SET valid_to = 1030 WHERE id % 7 = 0")  # superseded ones
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    arm = SqliteVecSemanticArm(storage, SqliteVecOptions(scan="vec0"))
    with storage.transaction() as tx:
        arm.bind(tx, "model", DIM)
        arm.add(tx, ids, vectors)
    return storage, ids, vectors


def _arms(storage: SqliteStorage) -> tuple[SqliteVecSemanticArm, SqliteVecSemanticArm]:
    out = []
    for scan in ("numpy", "vec0"):
        arm = SqliteVecSemanticArm(storage, SqliteVecOptions(scan=scan))  # type: ignore[arg-type]
        with storage.transaction() as tx:
            arm.bind(tx, "model", DIM)
        out.append(arm)
    return out[0], out[1]


def _ids(run: list) -> list[int]:  # type: ignore[type-arg]
    return [h.chunk_id for h in run]


FILTERS = st.builds(
    Filters,
    kinds=st.lists(st.sampled_from(KINDS + ("absent",)), max_size=2).map(tuple),
    tags=st.lists(st.sampled_from(("even", "odd")), max_size=1).map(tuple),
    created_after=st.none() | st.floats(990, 1070),
    created_before=st.none() | st.floats(990, 1070),
    metadata=st.none().map(lambda _: {}) | st.sampled_from([{"group": 1}, {"group": "2"}]),
    as_of=st.none() | st.floats(990, 1070),
    include_superseded=st.booleans(),
)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(filters=FILTERS, k=st.integers(1, 80), seed=st.integers(0, 3))
def test_numpy_scan_answers_exactly_what_vec0_answers(
    tmp_path_factory: pytest.TempPathFactory, filters: Filters, k: int, seed: int
) -> None:
    storage, _, _ = _store(tmp_path_factory.mktemp("m") / "s.sqlite3", 60, seed)
    numpy_arm, vec0_arm = _arms(storage)
    query = np.random.default_rng(seed + 10).standard_normal(DIM).astype(np.float32)
    got, want = numpy_arm.search(query, filters, k), vec0_arm.search(query, filters, k)
    assert _ids(got) == _ids(want)
    np.testing.assert_allclose([h.score for h in got], [h.score for h in want], atol=1e-5)
    assert [h.rank for h in got] == list(range(1, len(got) + 1))
    storage.close()


def test_scores_are_cosines_and_stored_vectors_come_back(tmp_path: Path) -> None:
    storage, ids, vectors = _store(tmp_path / "s.sqlite3", 10)
    arm, _ = _arms(storage)
    top = arm.search(vectors[3] * 5.0, Filters(include_superseded=True), 1)[0]
    assert top.chunk_id == ids[3] and top.score == pytest.approx(1.0, abs=1e-6)
    got = arm.vectors([ids[2], 10**9, ids[0]])
    np.testing.assert_array_equal(got[0], vectors[2])
    np.testing.assert_array_equal(got[1], np.zeros(DIM, np.float32))
    np.testing.assert_array_equal(got[2], vectors[0])
    storage.close()


def test_writes_of_another_connection_are_seen_by_the_next_search(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    storage, ids, vectors = _store(path, 12)
    reader, _ = _arms(storage)
    everything = Filters(include_superseded=True)
    assert len(reader.search(vectors[0], everything, 50)) == 12  # loaded
    other = SqliteStorage(path)  # another process would see the same file
    writer = SqliteVecSemanticArm(other, SqliteVecOptions(scan="vec0"))
    with other.transaction() as tx:
        writer.bind(tx, "model", DIM)
        writer.remove(tx, [ids[0], ids[5]])
        writer.add(tx, [ids[1]], -vectors[1][None, :])  # replaced
    run = reader.search(vectors[1], everything, 50)
    assert ids[0] not in _ids(run) and ids[5] not in _ids(run) and len(run) == 10
    assert run[-1].chunk_id == ids[1] and run[-1].score == pytest.approx(-1.0, abs=1e-6)
    with pytest.raises(RuntimeError), other.transaction() as tx:  # rolled back: never seen
        writer.remove(tx, ids[2:])
        raise RuntimeError("abort")
    assert len(reader.search(vectors[1], everything, 50)) == 10
    with other.transaction() as tx:
        writer.add(tx, [ids[0]], vectors[0][None, :])
    assert reader.search(vectors[0], everything, 1)[0].chunk_id == ids[0]
    np.testing.assert_array_equal(reader.vectors([ids[1]])[0], -vectors[1])
    other.close()
    storage.close()


def test_a_reader_behind_the_pruned_log_or_a_dropped_set_reloads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vector_log, "KEEP", 3)
    storage, ids, vectors = _store(tmp_path / "s.sqlite3", 8)
    reader, writer = _arms(storage)
    everything = Filters(include_superseded=True)
    reader.search(vectors[0], everything, 50)
    with storage.transaction() as tx:
        writer.remove(tx, ids[:6])  # six log rows, only the last three kept
    assert _ids(reader.search(vectors[7], everything, 50))[0] == ids[7]
    assert sorted(_ids(reader.search(vectors[7], everything, 50))) == ids[6:]
    with storage.transaction() as tx:
        writer.reset(tx)
        writer.bind(tx, "model", DIM)
        writer.add(tx, [ids[6]], vectors[6][None, :])
    assert _ids(reader.search(vectors[7], everything, 50)) == [ids[6]]
    storage.close()


def test_noncurrent_chunks_are_masked_out_by_default(tmp_path: Path) -> None:
    storage, ids, vectors = _store(tmp_path / "s.sqlite3", 6)
    arm, vec0 = _arms(storage)
    with storage.transaction() as tx:
        tx.execute("UPDATE chunks SET valid_to = NULL")
        tx.execute("UPDATE chunks SET valid_to = 2000 WHERE id IN (?, ?)", (ids[0], ids[1]))
    assert ids[0] not in _ids(arm.search(vectors[0], Filters(), 10))
    want = _ids(vec0.search(vectors[0], Filters(), 10))
    assert _ids(arm.search(vectors[0], Filters(), 10)) == want
    assert _ids(arm.search(vectors[0], Filters(include_superseded=True), 1)) == [ids[0]]
    storage.close()


def _approximate(storage: SqliteStorage, dims: int, candidates: int = 5) -> SqliteVecSemanticArm:
    arm = SqliteVecSemanticArm(storage, SqliteVecOptions(
        scan="numpy", approximate_above=40, approximate_dims=dims,
        approximate_candidates=candidates))
    with storage.transaction() as tx:
        arm.bind(tx, "model", DIM)
    return arm


def test_a_full_rank_projection_answers_exactly_and_follows_writes(tmp_path: Path) -> None:
    storage, ids, vectors = _store(tmp_path / "s.sqlite3", 60)
    arm, (_, vec0) = _approximate(storage, DIM), _arms(storage)
    rng = np.random.default_rng(3)
    filters = [Filters(), Filters(kinds=("memory", "note")), Filters(include_superseded=True)]

    def same() -> None:
        for _ in range(5):
            q = rng.standard_normal(DIM).astype(np.float32)
            for f in filters:
                assert _ids(arm.search(q, f, 7)) == _ids(vec0.search(q, f, 7))

    same()
    matrix = arm._matrices[arm.bound.table]  # type: ignore[union-attr]
    assert matrix.projection is not None and matrix.reduced.shape[1] == DIM
    with storage.transaction() as tx:  # replace, delete and add after the projection exists
        vec0.add(tx, ids[:3], -vectors[:3])
        vec0.remove(tx, ids[10:20])
    same()
    storage.close()


def test_a_low_rank_projection_keeps_exact_scores_and_most_of_the_top(tmp_path: Path) -> None:
    storage, _, _ = _store(tmp_path / "s.sqlite3", 200, seed=5)
    arm, (_, vec0) = _approximate(storage, 4, candidates=30), _arms(storage)
    rng = np.random.default_rng(4)
    found = 0
    for _ in range(20):
        q = rng.standard_normal(DIM).astype(np.float32)
        got, want = arm.search(q, Filters(), 5), vec0.search(q, Filters(), 5)
        exact = {h.chunk_id: h.score for h in vec0.search(q, Filters(), 200)}
        for hit in got:  # every returned score is the exact cosine of that chunk
            assert hit.score == pytest.approx(exact[hit.chunk_id], abs=1e-5)
        found += len(set(_ids(got)) & set(_ids(want)))
    assert arm._matrices[arm.bound.table].projection is not None  # type: ignore[union-attr]
    assert 60 <= found < 100  # 8-d Gaussian vectors through 4 dims, 35 of 200 rescored: 76
    storage.close()


def test_filtered_searches_stay_exact_past_the_threshold(tmp_path: Path) -> None:
    storage, _, _ = _store(tmp_path / "s.sqlite3", 300, seed=2)
    arm, (_, vec0) = _approximate(storage, 1, candidates=3), _arms(storage)
    rng = np.random.default_rng(6)
    missed = 0
    for _ in range(10):
        q = rng.standard_normal(DIM).astype(np.float32)
        for f in (Filters(kinds=("memory", "knowledge")), Filters(tags=("even",)),
                  Filters(as_of=1020.0), Filters(created_after=1100.0),
                  Filters(metadata={"group": "1"})):
            assert _ids(arm.search(q, f, 10)) == _ids(vec0.search(q, f, 10))
        missed += _ids(arm.search(q, Filters(), 10)) != _ids(vec0.search(q, Filters(), 10))
    assert arm._matrices[arm.bound.table].projection is not None  # type: ignore[union-attr]
    assert missed > 0  # unfiltered: 1 dimension, 13 rows rescored, approximate
    storage.close()


def test_the_projection_is_in_the_snapshot_the_next_process_restores(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    storage, _, vectors = _store(path, 60)
    storage.close()
    answers, basis = [], None
    # 1: exact (threshold 10**6), its snapshot has no projection; 2: restores it, fits the
    # projection on its first search and saves again; 3: loads whole and fits while loading
    # (snapshots off); 4: restores the projection saved by 2
    for above, snap in ((10**6, True), (40, True), (40, False), (40, True)):
        storage = SqliteStorage(path, snapshots=snap)
        arm = SqliteVecSemanticArm(storage, SqliteVecOptions(
            scan="numpy", approximate_above=above, approximate_dims=4,
            approximate_candidates=10))
        with storage.transaction() as tx:
            arm.bind(tx, "model", DIM)
        matrix = arm._matrix(arm.bound)  # type: ignore[arg-type]
        restored = matrix.snapshot.origin == "snapshot"
        fitted_before = matrix.projection is not None
        answers.append([_ids(arm.search(v, Filters(), 5)) for v in vectors[:10]])
        if matrix.snapshot.saving is not None:
            matrix.snapshot.saving.join()
        if above == 40:
            assert matrix.projection is not None
            if basis is None:
                basis = matrix.projection.basis.copy()
            np.testing.assert_array_equal(matrix.projection.basis, basis)  # seeded fit
        assert (restored, fitted_before) == {0: (False, False), 1: (True, False),
                                             2: (False, True), 3: (True, True)}[len(answers) - 1]
        storage.close()
    assert answers[1] == answers[2] == answers[3]


def test_a_wider_saved_projection_is_scanned_by_its_first_columns(tmp_path: Path) -> None:
    """A snapshot made with 6 dimensions, restored by an arm set to 3, ranks as an arm that
    fitted 3 (the same leading eigenvectors), and scans only those columns."""
    path = tmp_path / "s.sqlite3"
    storage, _, vectors = _store(path, 300, seed=8)
    storage.close()
    answers, widths = [], []
    for dims, snap in ((6, True), (3, True), (3, False)):  # save 6; restore it as 3; fit 3
        storage = SqliteStorage(path, snapshots=snap)
        arm = SqliteVecSemanticArm(storage, SqliteVecOptions(
            scan="numpy", approximate_above=40, approximate_dims=dims,
            approximate_candidates=20))
        with storage.transaction() as tx:
            arm.bind(tx, "model", DIM)
        matrix = arm._matrix(arm.bound)  # type: ignore[arg-type]
        answers.append([_ids(arm.search(v, Filters(), 5)) for v in vectors[:40]])
        widths.append(matrix.reduced.shape[1])
        if matrix.snapshot.saving is not None:
            matrix.snapshot.saving.join()
        storage.close()
    assert widths == [6, 6, 3]  # the second arm kept the snapshot's 6 columns
    assert answers[1] == answers[2] != answers[0]  # 3 of 6 dimensions: other candidates


@settings(max_examples=200, deadline=None)
@given(n=st.integers(1, 5000), c=st.integers(1, 300), seed=st.integers(0, 10**6),
       ties=st.booleans())
def test_top_rows_is_the_set_argpartition_picks(n: int, c: int, seed: int, ties: bool) -> None:
    rng = np.random.default_rng(seed)
    scores = rng.standard_normal(n).astype(np.float32)
    if ties:
        scores = np.round(scores, 1)
    got = top_rows(scores, c)
    assert len(got) == min(c, n) and len(set(got.tolist())) == len(got)
    kth = np.sort(scores)[::-1][min(c, n) - 1]  # every kept score reaches the c-th largest
    assert scores[got].min() == kth and (scores > kth).sum() <= len(got)


def test_a_set_growing_past_the_threshold_switches_to_the_projection(tmp_path: Path) -> None:
    storage, ids, vectors = _store(tmp_path / "s.sqlite3", 60)
    with storage.transaction() as tx:
        SqliteVecSemanticArm(storage).remove(tx, ids[30:])
    arm, (_, vec0) = _approximate(storage, DIM), _arms(storage)
    q = np.random.default_rng(9).standard_normal(DIM).astype(np.float32)
    assert _ids(arm.search(q, Filters(), 5)) == _ids(vec0.search(q, Filters(), 5))
    matrix = arm._matrices[arm.bound.table]  # type: ignore[union-attr]
    assert matrix.projection is None and matrix.matrix.flags.f_contiguous  # 30 < 40: exact
    with storage.transaction() as tx:
        vec0.add(tx, ids[30:], vectors[30:])
    assert _ids(arm.search(q, Filters(), 5)) == _ids(vec0.search(q, Filters(), 5))
    assert matrix.projection is not None and matrix.matrix.flags.c_contiguous
    storage.close()


def test_the_default_scans_vec0_until_warmed_then_the_copy(tmp_path: Path) -> None:
    storage, ids, vectors = _store(tmp_path / "s.sqlite3", 30)
    arm = SqliteVecSemanticArm(storage)  # scan = "warm"
    with storage.transaction() as tx:
        arm.bind(tx, "model", DIM)
    table = arm.bound.table  # type: ignore[union-attr]
    before = arm.search(vectors[3], Filters(), 5)
    np.testing.assert_array_equal(arm.vectors([ids[3]])[0], vectors[3])
    assert table not in arm._matrices or arm._matrices[table].seq < 0  # never loaded
    arm.warm()
    assert arm._matrices[table].count == 30
    after = arm.search(vectors[3], Filters(), 5)
    assert _ids(after) == _ids(before) and after[0].chunk_id == ids[3]
    assert [h.score for h in after] == pytest.approx([h.score for h in before], abs=1e-6)
    with storage.transaction() as tx:  # the warmed copy follows writes
        arm.remove(tx, [ids[3]])
    assert ids[3] not in _ids(arm.search(vectors[3], Filters(), 5))
    storage.close()


def test_missing_count_follows_writes_of_this_and_other_connections(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    storage, ids, vectors = _store(path, 6)
    arm, _ = _arms(storage)
    assert arm.missing_count() == 0 and arm.missing_count() == 0  # second answer cached
    other = SqliteStorage(path)
    with other.transaction() as tx:  # another connection adds a chunk without a vector
        doc = Document(text="no vector yet")
        other.add_document(tx, doc, [Chunk(document_id=doc.id, ordinal=0, text=doc.text)])
    assert arm.missing_count() == 1
    with storage.transaction() as tx:  # this connection removes a vector
        arm.remove(tx, [ids[0]])
    assert arm.missing_count() == 2
    other.close()
    storage.close()


def _loaded_matrix(n: int, dim: int, seed: int) -> tuple[VectorMatrix, np.ndarray]:
    """A matrix holding ``n`` random ``dim``-d vectors for chunk ids 1..n (no store)."""
    vectors = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    matrix = VectorMatrix("t", dim)
    matrix._append(np.arange(1, n + 1, dtype=np.int64), vectors)
    return matrix, vectors


@pytest.mark.parametrize("share", [0.002, 0.05, 0.15, 0.3, 1.0])
def test_a_selective_mask_scores_its_rows_only_with_the_full_products_answers(
    share: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Below GATHER_SHARE the kept rows are gathered from the row-major copy; the answers
    (ids in order, cosines to float32 rounding) are the full product's and float64's."""
    matrix, vectors = _loaded_matrix(3000, 384, seed=7)
    rng = np.random.default_rng(8)
    mask = rng.random(3000) < share
    query = rng.standard_normal(384).astype(np.float32)
    got = matrix.top_k(query, 50, mask)
    assert (matrix.rowmajor is not None) == (mask.sum() < 3000 * GATHER_SHARE)
    exact = vectors.astype(np.float64) @ query.astype(np.float64)
    exact /= np.linalg.norm(vectors, axis=1) * np.linalg.norm(query)
    kept = np.flatnonzero(mask)
    want = kept[np.argsort(-exact[kept], kind="stable")][:50] + 1
    assert got.ids.tolist() == want.tolist()
    np.testing.assert_allclose(got.scores, exact[want - 1], atol=1e-6)
    monkeypatch.setattr(matrix_module, "GATHER_SHARE", 0.0)  # the full product instead
    full = matrix.top_k(query, 50, mask)
    assert full.ids.tolist() == got.ids.tolist()
    np.testing.assert_allclose(full.scores, got.scores, atol=1e-6)


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 1023, 1024, 1025, 2051])
def test_a_gathered_score_does_not_depend_on_the_rows_gathered_with_it(size: int) -> None:
    rng = np.random.default_rng(size)
    rows_major = rng.standard_normal((3000, 384)).astype(np.float32)
    query = rng.standard_normal(384).astype(np.float32)
    everything = gathered_scores(rows_major, np.arange(3000), query, new_buffer(384))
    rows = np.sort(rng.choice(3000, size, replace=False))
    got = gathered_scores(rows_major, rows, query, new_buffer(384))
    np.testing.assert_array_equal(got, everything[rows])  # bit for bit
    np.testing.assert_allclose(got, rows_major[rows].astype(np.float64) @ query, atol=1e-4)


def test_the_row_major_copy_follows_writes_after_the_first_selective_search(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.sqlite3"
    storage, ids, vectors = _store(path, 60)
    arm, vec0 = _arms(storage)
    selective = Filters(kinds=("memory",), tags=("even",))  # 9 of 60 rows: a gather
    query = np.random.default_rng(5).standard_normal(DIM).astype(np.float32)
    assert _ids(arm.search(query, selective, 20)) == _ids(vec0.search(query, selective, 20))
    matrix = arm._matrices[arm.bound.table]  # type: ignore[union-attr]
    assert matrix.rowmajor is not None and matrix.matrix.flags.f_contiguous
    other = SqliteStorage(path)  # writes of another connection, past the copy's capacity
    writer = SqliteVecSemanticArm(other, SqliteVecOptions(scan="vec0"))
    with other.transaction() as tx:
        writer.bind(tx, "model", DIM)
        writer.remove(tx, [ids[0], ids[6]])
        writer.add(tx, [ids[12]], -vectors[12][None, :])
        new = []
        for i in range(200):
            doc = Document(text=f"new {i}", kind="memory", tags=["even"])
            new += other.add_document(tx, doc, [Chunk(document_id=doc.id, ordinal=0, text="x")])
        more = np.random.default_rng(6).standard_normal((200, DIM)).astype(np.float32)
        writer.add(tx, [c.id for c in new], more)
    for filters in (selective, Filters(kinds=("note",), tags=("even",)), Filters()):
        got, want = arm.search(query, filters, 30), vec0.search(query, filters, 30)
        assert _ids(got) == _ids(want)
        np.testing.assert_allclose([h.score for h in got], [h.score for h in want], atol=1e-5)
    n = matrix.count
    assert n == 258 and matrix.rowmajor is not None
    np.testing.assert_array_equal(matrix.rowmajor[:n], matrix.matrix[:n])
    other.close()
    storage.close()
