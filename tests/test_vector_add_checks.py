"""``sqlite-vec``'s ``add`` on a real SQLite file: rows that are zero or not finite are
refused by number (nothing of the transaction kept), rows whose squared norm overflows or
underflows float32 are not; consecutive and scattered chunk ids store the same vectors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from octomem.engine.errors import OctomemError
from octomem.engine.types import Chunk, Document
from octomem.plugins.sqlite.storage import SqliteStorage
from octomem.plugins.sqlite_vec.arm import SqliteVecSemanticArm

DIM = 8


def _store(path: Path, n: int = 6) -> tuple[SqliteStorage, SqliteVecSemanticArm, list[int]]:
    storage = SqliteStorage(path)
    arm = SqliteVecSemanticArm(storage)
    ids = []
    with storage.transaction() as tx:
        arm.bind(tx, "test-model", DIM)
        for i in range(n):
            doc = Document(f"text {i}", id=f"d{i}")
            ids += [c.id for c in storage.add_document(tx, doc, [Chunk(doc.id, 0, doc.text)])]
    return storage, arm, ids


def _unit(rows: int, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).standard_normal((rows, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.mark.parametrize(("row", "value"), [(0, 0.0), (2, np.nan), (3, np.inf), (1, -np.inf)])
def test_a_zero_or_not_finite_row_is_refused_by_number(
    tmp_path: Path, row: int, value: float
) -> None:
    storage, arm, ids = _store(tmp_path / "s.sqlite")
    vectors = _unit(len(ids))
    if value == 0.0:
        vectors[row] = 0.0
    else:
        vectors[row, 3] = value
    with pytest.raises(OctomemError, match=rf"^1 vectors are zero or not finite \(row {row}\)"):
        with storage.transaction() as tx:
            arm.add(tx, ids, vectors)
    assert arm.missing() == ids  # nothing kept
    storage.close()


def test_rows_whose_squares_overflow_or_underflow_are_stored(tmp_path: Path) -> None:
    storage, arm, ids = _store(tmp_path / "s.sqlite", 2)
    vectors = np.full((2, DIM), 1e20, dtype=np.float32)  # squares: inf in float32
    vectors[1] = 1e-30  # squares: 0 in float32
    with storage.transaction() as tx:
        arm.add(tx, ids, vectors)
    assert arm.missing() == []
    np.testing.assert_array_equal(arm.vectors(ids), vectors)
    storage.close()


def test_consecutive_and_scattered_ids_store_the_same(tmp_path: Path) -> None:
    vectors = _unit(6, seed=3)
    got = []
    for name, order in (("range", [0, 1, 2, 3, 4, 5]), ("scattered", [5, 0, 3, 1, 4, 2])):
        storage, arm, ids = _store(tmp_path / f"{name}.sqlite")
        chosen = [ids[i] for i in order]
        with storage.transaction() as tx:
            arm.add(tx, chosen[:3], vectors[order[:3]])
        with storage.transaction() as tx:
            arm.add(tx, chosen[3:], vectors[order[3:]])
        assert arm.missing() == []
        got.append(arm.vectors(ids))
        storage.close()
    np.testing.assert_array_equal(got[0], vectors)
    np.testing.assert_array_equal(got[1], vectors)
