"""The sqlite storage's chunk cache: a warmed store serves recently read chunks from RAM
and every answer equals a cold read, after any writes by this or another connection."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings

from octomem.engine.types import Chunk, Document
from octomem.plugins.sqlite.storage import SqliteStorage
from tests.test_filter_index import _apply, writes


def _ids(storage: SqliteStorage) -> list[int]:
    rows = storage.connection().execute("SELECT id FROM chunks ORDER BY id").fetchall()
    return [r[0] for r in rows] + [999_999]  # an unknown id is skipped


def _same_as_cold(warm: SqliteStorage, path: Path) -> None:
    cold = SqliteStorage(path)  # never warmed: reads SQL every time
    ids = _ids(cold)
    assert warm.get_chunks(ids) == cold.get_chunks(ids)
    assert warm.get_chunks(ids[::-1]) == cold.get_chunks(ids[::-1])
    cold.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=writes(), then=writes(), more=writes())
def test_cached_reads_equal_cold_reads_after_any_writes(
    first: list[tuple[str, Any]], then: list[tuple[str, Any]], more: list[tuple[str, Any]]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "db.sqlite3"
        warm, other = SqliteStorage(path), SqliteStorage(path)
        _apply(warm, first)
        warm.fields.sync(warm.connection())  # what the in-RAM arms' warm() does
        _same_as_cold(warm, path)
        stored = len(_ids(warm)) - 1  # the first writes may leave no chunk at all
        assert warm._cache is not None and (len(warm._cache) > 0) == (stored > 0)
        _apply(other, then)  # another connection (as another process) supersedes, deletes
        _same_as_cold(warm, path)
        _apply(warm, more)  # and this one
        _same_as_cold(warm, path)
        warm.close()
        other.close()


def test_a_superseded_chunk_is_read_again_and_a_writing_transaction_reads_its_own_rows(
    tmp_path: Path,
) -> None:
    path = tmp_path / "db.sqlite3"
    warm, other = SqliteStorage(path), SqliteStorage(path)
    doc = Document("text", id="d1", kind="NOTE")
    with warm.transaction() as tx:
        (chunk,) = warm.add_document(tx, doc, [Chunk(doc.id, 0, "text")])
    warm.fields.sync(warm.connection())
    assert warm.get_chunks([chunk.id])[0].valid_to is None
    assert warm._cache is not None and len(warm._cache) == 1
    with other.transaction() as tx:
        other.supersede(tx, doc.id, "d2", 300.0)
    retired = warm.get_chunks([chunk.id])[0].valid_to
    assert retired is not None and retired == other.get_chunks([chunk.id])[0].valid_to
    try:
        with warm.transaction() as tx:
            warm.delete_document(tx, doc.id)
            assert warm.get_chunks([chunk.id]) == []  # its own uncommitted delete
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    assert [c.valid_to for c in warm.get_chunks([chunk.id])] == [retired]  # rolled back
    with other.transaction() as tx:
        other.delete_document(tx, doc.id)
    assert warm.get_chunks([chunk.id]) == []
    warm.close()
    other.close()


def test_pipeline_warm_ends_with_the_storage_reading_every_page_of_its_chunks_table(
    data_dir: Path,
) -> None:
    """``Pipeline.warm`` warms the storage last: the ``sqlite`` storage walks the chunks
    table's own b-tree (not a smaller index: every page a chunk read could need), and
    chunks read afterwards are the same as before."""
    from octomem.engine.memory.facade import open_memory
    from octomem.engine.types import Query

    memory = open_memory(overrides={"data_dir": str(data_dir),
                                    "pipeline": {"embedder": "hashing"}})
    for i in range(30):
        memory.remember(f"Fact number {i} about the deploy window", scope="global")
    pipeline = memory.scopes.require("global")
    storage = pipeline.arms.storage
    before = storage.get_chunks(_ids(storage))
    statements: list[str] = []
    conn = pipeline.arms.storage.connection()
    conn.exec_trace = lambda cursor, sql, bindings: statements.append(sql) or True
    assert pipeline.warm() == ["sqlite-vec", "fts5", "sqlite"]
    conn.exec_trace = None
    page_in = [s for s in statements if "NOT INDEXED" in s]
    assert page_in == ["SELECT count(*) FROM chunks NOT INDEXED"]
    plan = conn.execute("EXPLAIN QUERY PLAN " + page_in[0]).fetchall()
    assert [row[-1] for row in plan] == ["SCAN chunks"]  # the table, no covering index
    assert storage.get_chunks(_ids(storage)) == before and len(before) == 30
    assert pipeline.search(Query("deploy window", top_k=5)).hits
    memory.close()
