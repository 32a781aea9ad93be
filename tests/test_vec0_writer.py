"""New vectors written into vec0's shadow tables by whole blocks or into a block's free last
slots (``plugins/sqlite_vec/vec0_writer.py``) leave every shadow table, row by row, as
vec0's own ``INSERT`` s do: fresh sets, a partly filled newest block, holes left by
removals, a block emptied and dropped, replaced vectors, kinds longer than the 12 bytes a
slot keeps, an ingest's embedding batches (8, 16, 32, then 64 a transaction)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from octomem.engine.types import Chunk, Document
from octomem.plugins.sqlite.storage import SqliteStorage
from octomem.plugins.sqlite_vec import vec0_writer
from octomem.plugins.sqlite_vec.arm import SqliteVecSemanticArm

SHADOW = ("chunks", "rowids", "vector_chunks00", "metadatachunks00", "metadatachunks01",
          "metadatatext00", "info")
DIM = 8


def _store(root: Path, kinds: list[str], steps: list[tuple[str, int, int]]
           ) -> dict[str, Any]:
    """Write 700 one-chunk documents, then run ``steps`` (add or remove the vectors of
    chunk ids ``a+1..b``, one transaction each); return every shadow table's rows (with
    their ``_rowid_``), ``sqlite_sequence``, a filtered KNN and the public rows."""
    storage = SqliteStorage(root / "x.sqlite3")
    arm = SqliteVecSemanticArm(storage)
    with storage.transaction() as tx:
        arm.bind(tx, "model", DIM)
        for i in range(700):
            doc = Document(f"t{i}", id=f"d{i}", kind=kinds[i % len(kinds)],
                           created_at=1.7e9 + i * 0.37)
            storage.add_document(tx, doc, [Chunk(document_id=doc.id, ordinal=0, text=doc.text)])
    rng = np.random.default_rng(0)
    for op, a, b in steps:
        with storage.transaction() as tx:
            if op == "add":
                v = rng.standard_normal((b - a, DIM)).astype(np.float32)
                arm.add(tx, list(range(a + 1, b + 1)), v / np.linalg.norm(v, axis=1, keepdims=True))
            else:
                arm.remove(tx, list(range(a + 1, b + 1)))
    conn, table = storage.connection(), arm.bound.table  # type: ignore[union-attr]
    out = {name: conn.execute(f'SELECT _rowid_, * FROM "{table}_{name}" ORDER BY _rowid_')
           .fetchall() for name in SHADOW}
    out["sequence"] = sorted(conn.execute("SELECT name, seq FROM sqlite_sequence").fetchall())
    out["knn"] = conn.execute(
        f"SELECT chunk_id, distance FROM {table} WHERE embedding MATCH ? AND k = 20 "
        "AND kind = ? ORDER BY distance", (np.ones(DIM, np.float32).tobytes(), kinds[0])).fetchall()
    out["rows"] = conn.execute(
        f"SELECT chunk_id, embedding, kind, created_at FROM {table} ORDER BY chunk_id").fetchall()
    storage.close()
    return out


CASES = {
    "fresh, whole blocks": (["ITEM"], [("add", 0, 256), ("add", 256, 512)]),
    "partly filled newest block": (["ITEM", "NOTE", "A-VERY-LONG-KIND-NAME", "TURN"],
                                   [("add", 0, 100), ("add", 100, 600), ("add", 600, 601)]),
    "holes": (["NOTE", "ITEM"], [("add", 0, 300), ("remove", 10, 40), ("remove", 270, 280),
                                 ("add", 300, 650)]),
    "replaced": (["NOTE"], [("add", 0, 300), ("add", 100, 400)]),
    "block emptied": (["NOTE", "exactly12byt", "thirteen13byt"],
                      [("add", 0, 512), ("remove", 256, 512), ("add", 512, 700)]),
    "embedding's batches (8, 16, 32, 64, ...)": (
        ["ITEM", "A-VERY-LONG-KIND-NAME"],
        [("add", a, b) for a, b in ((0, 8), (8, 24), (24, 56), (56, 120), (120, 184),
                                    (184, 248), (248, 312), (312, 376), (376, 440),
                                    (440, 504), (504, 568), (568, 632), (632, 696))]),
    "holes in the newest block, then its tail": (
        ["NOTE"], [("add", 0, 100), ("remove", 50, 60), ("add", 100, 120), ("add", 120, 300)]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_blocks_written_directly_equal_vec0_inserts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    kinds, steps = CASES[case]
    written: list[int] = []
    for name in ("write_blocks", "fill_tail"):
        real = getattr(vec0_writer, name)
        monkeypatch.setattr(vec0_writer, name,
                            lambda *a, real=real: (written.append(len(a)), real(*a))[1])
    (tmp_path / "fast").mkdir()
    fast = _store(tmp_path / "fast", kinds, steps)
    assert written, "neither whole blocks nor a block's tail were written directly"
    monkeypatch.setattr(vec0_writer, "KNOWN_VERSIONS", frozenset())  # every vector by INSERT
    (tmp_path / "insert").mkdir()
    assert fast == _store(tmp_path / "insert", kinds, steps)


def test_an_unknown_sqlite_vec_or_declaration_is_written_by_insert(tmp_path: Path) -> None:
    storage = SqliteStorage(tmp_path / "x.sqlite3")
    conn = storage.connection()
    conn.execute("CREATE VIRTUAL TABLE other USING vec0(embedding float[8])")
    assert vec0_writer.block_size(conn, "other", DIM) is None
    arm = SqliteVecSemanticArm(storage)
    with storage.transaction() as tx:
        arm.bind(tx, "model", DIM)
    table = arm.bound.table  # type: ignore[union-attr]
    assert vec0_writer.block_size(conn, table, DIM) == 256
    assert vec0_writer.block_size(conn, table, DIM + 1) is None
    storage.close()
