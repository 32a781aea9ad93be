"""The ``fts5`` arm indexes a run of chunks with consecutive ids by one ``INSERT ... SELECT``
over ``chunks``: the same index, term by term, as one row per chunk."""

from __future__ import annotations

from pathlib import Path

import pytest

from octomem.engine.types import Chunk, Document, Filters
from octomem.plugins.fts5 import arm as fts5
from octomem.plugins.fts5.arm import Fts5KeywordArm
from octomem.plugins.sqlite.storage import SqliteStorage

TEXTS = [f"note {i} about {'cats' if i % 3 else 'dogs'} and Straße number {i * 7}"
         for i in range(40)]


def _store(root: Path, by_range: bool, monkeypatch: pytest.MonkeyPatch
           ) -> tuple[SqliteStorage, Fts5KeywordArm, list[Chunk]]:
    """Store 40 documents (every fifth with a title) and index their chunks in one call."""
    storage = SqliteStorage(root / "store.sqlite3")
    arm = Fts5KeywordArm(storage)
    with monkeypatch.context() as patch:
        if not by_range:  # no run is long enough: one row per chunk
            patch.setattr(fts5, "RANGE_MIN", 10**9)
        with storage.transaction() as tx:
            stored = [c for i, text in enumerate(TEXTS) for c in storage.add_document(
                tx, Document(text, id=f"d{i}", title="Pets" if i % 5 == 0 else None),
                [Chunk(document_id=f"d{i}", ordinal=0, text=text)])]
            arm.index(tx, stored)
    return storage, arm, stored


def _terms(storage: SqliteStorage) -> list[tuple[object, ...]]:
    """Every (term, rowid, column, offset) the FTS5 index holds."""
    conn = storage.connection()
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.v USING fts5vocab(main, "
                 "fts5_chunks, instance)")
    return conn.execute("SELECT term, doc, col, offset FROM temp.v ORDER BY 1, 2, 4").fetchall()


def test_a_run_indexed_by_range_holds_what_rows_hold(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "range").mkdir()
    (tmp_path / "rows").mkdir()
    by_range, arm_r, chunks = _store(tmp_path / "range", True, monkeypatch)
    by_rows, arm_o, _ = _store(tmp_path / "rows", False, monkeypatch)
    assert [c.id for c in chunks] == list(range(1, 41))
    terms = _terms(by_range)
    assert terms == _terms(by_rows)
    assert ("pet", 1, "body", 0) in terms and ("note", 1, "body", 1) in terms  # title first
    for query in ("cats", "dogs pets", "strasse 70", "number 14"):
        hits = [(h.chunk_id, h.score) for h in arm_r.search(query, Filters(), 10)]
        assert hits and hits == [(h.chunk_id, h.score) for h in arm_o.search(query, Filters(), 10)]
    by_range.close()
    by_rows.close()


def test_indexing_a_range_again_replaces_its_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage, arm, chunks = _store(tmp_path, True, monkeypatch)
    before = _terms(storage)
    with storage.transaction() as tx:
        assert fts5._index_range(tx, [c.id for c in chunks])  # held ids deleted first
    assert _terms(storage) == before
    conn = storage.connection()
    assert conn.execute("SELECT count(*) FROM fts5_chunks_docsize").get == 40
    with storage.transaction() as tx:
        arm.remove(tx, [c.id for c in chunks])
    assert arm.search("cats", Filters(), 5) == []
    storage.close()


def test_other_ids_take_the_row_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    storage, arm, chunks = _store(tmp_path, True, monkeypatch)
    with storage.transaction() as tx:
        tx.execute("DELETE FROM fts5_chunks")
        assert not fts5._index_range(tx, [c.id for c in chunks[::2]])  # not consecutive
        assert not fts5._index_range(tx, [c.id for c in chunks][::-1])  # not ascending
        assert not fts5._index_range(tx, [c.id for c in chunks[:5]])  # fewer than RANGE_MIN
        assert not fts5._index_range(tx, list(range(30, 50)))  # 41-49 are not stored
        assert tx.execute("SELECT count(*) FROM fts5_chunks_docsize").get == 0
        arm.index(tx, chunks[::2])
    assert {h.chunk_id for h in arm.search("dogs", Filters(), 40)} == {
        c.id for c in chunks[::2] if "dogs" in c.text}
    storage.close()
