"""The int8 scan of the projection (``approximate_scan = "int8"``, :mod:`.quantized`): the
candidates it picks on a real store, its codes after writes, and its snapshots."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from octomem.engine.types import Chunk, Document, Filters
from octomem.plugins.sqlite.snapshots import folder
from octomem.plugins.sqlite.storage import SqliteStorage
from octomem.plugins.sqlite_vec.arm import SqliteVecOptions, SqliteVecSemanticArm
from octomem.plugins.sqlite_vec.quantized import PackedCodes, encode

DIM = 32


def _vectors(n: int, seed: int) -> np.ndarray:
    """Clustered vectors of rank ~12 plus a little noise (what text embeddings resemble:
    most of the energy in a few directions), float32 ``(n, DIM)``; one distribution, the
    draws by ``seed``."""
    shape = np.random.default_rng(0)
    basis = shape.standard_normal((12, DIM))
    centres = shape.standard_normal((40, 12))
    rng = np.random.default_rng(seed + 1)
    own = centres[rng.integers(0, 40, n)] + 0.3 * rng.standard_normal((n, 12))
    return (own @ basis + 0.05 * rng.standard_normal((n, DIM))).astype(np.float32)


def _store(path: Path, vectors: np.ndarray) -> tuple[SqliteStorage, list[int]]:
    storage = SqliteStorage(path)
    ids = []
    with storage.transaction() as tx:
        for i in range(len(vectors)):
            doc = Document(text=f"doc {i}")
            ids.append(storage.add_document(tx, doc, [Chunk(doc.id, 0, doc.text)])[0].id)
    arm = SqliteVecSemanticArm(storage, SqliteVecOptions(scan="vec0"))
    with storage.transaction() as tx:
        arm.bind(tx, "model", DIM)
        arm.add(tx, ids, vectors)
    return storage, ids


def _arm(storage: SqliteStorage, **options: object) -> SqliteVecSemanticArm:
    """An in-RAM arm; ``approximate_*`` options given, else exact."""
    arm = SqliteVecSemanticArm(storage, SqliteVecOptions(scan="numpy", **options))  # type: ignore[arg-type]
    with storage.transaction() as tx:
        arm.bind(tx, "model", DIM)
    return arm


APPROX = {"approximate_above": 100, "approximate_dims": 16, "approximate_candidates": 100}


def _ids(run: list) -> list[int]:  # type: ignore[type-arg]
    return [h.chunk_id for h in run]


def _matrix(arm: SqliteVecSemanticArm):  # type: ignore[no-untyped-def]
    return arm._matrices[arm.bound.table]  # type: ignore[union-attr]


def _codes_follow_rows(arm: SqliteVecSemanticArm) -> None:
    """The matrix's codes are the codes of its current projected rows, and the packed scan
    scores them as numpy's int32 product does."""
    m = _matrix(arm)
    n = m.count
    want = encode(m.reduced[:n, :m.codes.shape[1]], m.inv_norms[:n], m.scale)
    np.testing.assert_array_equal(m.codes[:n], want)
    q = np.random.default_rng(1).integers(-127, 128, m.codes.shape[1]).astype(np.int8)
    np.testing.assert_array_equal(m.packed.scores(m.codes, n, q),
                                  m.codes[:n].astype(np.int32) @ q.astype(np.int32))


def test_the_int8_scan_picks_the_exact_top_on_a_real_store(tmp_path: Path) -> None:
    vectors = _vectors(3000, seed=0)
    storage, _ = _store(tmp_path / "s.sqlite3", vectors)
    int8, float32 = _arm(storage, **APPROX), _arm(storage, **APPROX, approximate_scan="float32")
    exact = _arm(storage)
    queries = _vectors(40, seed=1)
    for q in queries:
        want = _ids(exact.search(q, Filters(), 10))
        assert _ids(int8.search(q, Filters(), 10)) == want
        assert _ids(float32.search(q, Filters(), 10)) == want
    m = _matrix(int8)
    assert m.codes.dtype == np.int8 and m.codes.shape[1] == 16 and m.packed.packs == 1
    assert _matrix(float32).packed.packs == 0  # (it restored int8's snapshot: codes unused)
    storage.close()


def test_codes_and_answers_follow_writes_of_another_arm(tmp_path: Path) -> None:
    vectors = _vectors(3000, seed=2)
    storage, ids = _store(tmp_path / "s.sqlite3", vectors)
    int8, exact = _arm(storage, **APPROX), _arm(storage)
    writer = SqliteVecSemanticArm(storage, SqliteVecOptions(scan="vec0"))
    with storage.transaction() as tx:
        writer.bind(tx, "model", DIM)
    queries = _vectors(15, seed=3)

    def same() -> None:
        for q in queries:
            assert _ids(int8.search(q, Filters(), 10)) == _ids(exact.search(q, Filters(), 10))

    same()
    assert ids[0] not in _ids(int8.search(queries[0], Filters(), 10))
    packs = _matrix(int8).packed.packs
    with storage.transaction() as tx:  # replace 10 (by the queries: now top hits), delete 10
        writer.add(tx, ids[:10], queries[:10])
        writer.remove(tx, ids[100:110])
    same()
    assert _ids(int8.search(queries[0], Filters(), 10))[0] == ids[0]
    m = _matrix(int8)
    assert m.packed.packs == packs and m.packed.dirty  # a few rows: scored apart, no repack
    _codes_follow_rows(int8)
    with storage.transaction() as tx:  # past REPACK_SHARE (1/64 of ~3k rows): packs again
        writer.remove(tx, ids[200:300])
    same()
    assert m.packed.packs == packs + 1 and not m.packed.dirty
    _codes_follow_rows(int8)
    storage.close()


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 400), ops=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 10**6)),
                                            max_size=30), seed=st.integers(0, 100))
def test_packed_scores_equal_numpys_after_any_writes(n: int, ops: list[tuple[int, int]],
                                                     seed: int) -> None:
    """Packed once, then rows replaced (0), moved into a hole (1) or appended (2): the
    scores stay numpy's int32 product of the codes as they are now."""
    rng = np.random.default_rng(seed)
    codes = np.zeros((n + len(ops), 24), dtype=np.int8)
    codes[:n] = rng.integers(-127, 128, (n, 24))
    count, packed = n, PackedCodes()
    packed.pack(codes, count)
    for op, at in ops:
        if op == 0 and count:
            pos = at % count
            codes[pos] = rng.integers(-127, 128, 24)
            packed.touch(pos)
        elif op == 1 and count:
            pos, count = at % count, count - 1
            codes[pos] = codes[count]
            packed.touch(pos)
        else:
            codes[count] = rng.integers(-127, 128, 24)
            packed.touch(count)
            count += 1
        q = rng.integers(-127, 128, 24).astype(np.int8)
        want = codes[:count].astype(np.int32) @ q.astype(np.int32)
        np.testing.assert_array_equal(packed.scores(codes, count, q), want)


def test_codes_are_snapshotted_and_an_old_snapshot_without_them_is_coded(tmp_path: Path) -> None:
    """1: the float32 scan saves a snapshot without codes; 2: an int8 arm restores it,
    codes it on its first search and saves again; 3: restores the codes (no coding), the
    same answers as 2 and as an int8 arm loading the table whole (snapshots off)."""
    path = tmp_path / "s.sqlite3"
    vectors = _vectors(1500, seed=5)
    storage, _ = _store(path, vectors)
    storage.close()
    queries, answers, restored = _vectors(20, seed=6), [], []
    for scan, snap in (("float32", True), ("int8", True), ("int8", True), ("int8", False)):
        storage = SqliteStorage(path, snapshots=snap)
        arm = _arm(storage, **APPROX, approximate_scan=scan)
        m = arm._matrix(arm.bound)  # type: ignore[arg-type]
        restored.append((m.snapshot.origin, m.scale is not None))
        answers.append([_ids(arm.search(q, Filters(), 10)) for q in queries])
        if m.snapshot.saving is not None:
            m.snapshot.saving.join()
        if snap:
            base = folder(path)
            saved = json.loads((base / f"{m.table}.json").read_text())["folder"]
            has_codes = (base / saved / "codes.npy").exists()
            assert has_codes == (scan == "int8")
        storage.close()
    assert restored == [("tables", False), ("snapshot", False), ("snapshot", True),
                        ("tables", True)]
    assert answers[1] == answers[2] == answers[3]


def test_prepare_packs_restored_codes_before_the_first_search(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    storage, _ = _store(path, _vectors(1500, seed=7))
    arm = _arm(storage, **APPROX)
    arm.search(_vectors(1, seed=8)[0], Filters(), 5)
    m = _matrix(arm)
    if m.snapshot.saving is not None:
        m.snapshot.saving.join()
    storage.close()
    storage = SqliteStorage(path)
    arm = SqliteVecSemanticArm(storage, SqliteVecOptions(**APPROX))  # scan "warm": one-shot
    with storage.transaction() as tx:
        arm.bind(tx, "model", DIM)
    arm.prepare()
    m = _matrix(arm)
    assert m.snapshot.origin == "snapshot" and m.packed.packs == 1 and m.packed.rows == 1500
    arm.search(_vectors(1, seed=8)[0], Filters(), 5)
    assert m.packed.packs == 1
    storage.close()


def test_warm_makes_the_approximate_stage_ready_before_the_first_search(tmp_path: Path) -> None:
    """A long-running process's warm-up fits, codes and packs; the search packs nothing."""
    storage, _ = _store(tmp_path / "s.sqlite3", _vectors(1500, seed=9))
    arm = _arm(storage, **APPROX)
    assert arm.warm()
    m = _matrix(arm)
    assert m.projection is not None and m.scale is not None and m.packed.packs == 1
    arm.search(_vectors(1, seed=10)[0], Filters(), 5)
    assert m.packed.packs == 1
    below = _arm(storage, approximate_above=10**6)  # below the threshold: nothing to ready
    below.warm()
    assert _matrix(below).packed.packs == 0
    storage.close()
