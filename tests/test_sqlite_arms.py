"""What the SQLite implementations promise beyond the Protocols: connections, schema, KNN plans."""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

import apsw
import numpy as np
import pytest
from pydantic import ValidationError

from octomem.engine.arms import ArmContext
from octomem.engine.errors import IncompatibleArmsError, InvalidQueryError, OctomemError
from octomem.engine.types import Chunk, Document, Filters
from octomem.plugins.fts5.arm import Fts5KeywordArm
from octomem.plugins.sqlite import connection
from octomem.plugins.sqlite import storage as sqlite_storage
from octomem.plugins.sqlite.storage import SqliteStorage, SqliteStorageOptions, filter_sql
from octomem.plugins.sqlite_vec.arm import (
    KNN_MAX_K,
    SqliteVecSemanticArm,
    knn_sql,
    vector_table_name,
)


@pytest.fixture
def storage(tmp_path: Path):  # type: ignore[no-untyped-def]
    store = SqliteStorage(tmp_path / "t.sqlite3")
    yield store
    store.close()


def _add(storage: SqliteStorage, text: str, **fields: object) -> int:
    doc = Document(text=text, **fields)  # type: ignore[arg-type]
    with storage.transaction() as tx:
        chunk = Chunk(document_id=doc.id, ordinal=0, text=text)
        return storage.add_document(tx, doc, [chunk])[0].id


def _in_thread(fn):  # type: ignore[no-untyped-def]
    out: list[object] = []
    thread = threading.Thread(target=lambda: out.append(fn()))
    thread.start()
    thread.join(timeout=30)
    return out[0]


def test_one_connection_per_thread_each_with_sqlite_vec(storage: SqliteStorage) -> None:
    main = storage.connection()
    assert storage.connection() is main
    other = _in_thread(storage.connection)
    assert other is not main
    version = _in_thread(lambda: storage.connection().execute("SELECT vec_version()").fetchone()[0])
    assert str(version).startswith("v")


def test_wal_busy_timeout_and_schema_version(tmp_path: Path) -> None:
    spec_options = SqliteStorageOptions(filename="custom.db", busy_timeout_ms=1234)
    store = sqlite_storage.build(spec_options, ArmContext(root=tmp_path / "scope"))
    try:
        assert store.path == tmp_path / "scope" / "custom.db" and store.path.exists()
        conn = store.connection()
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 1234
        assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert store.get_meta("schema_version") == str(sqlite_storage.SCHEMA_VERSION)
        assert store.size_bytes() > 0
    finally:
        store.close()


@pytest.mark.parametrize(
    "bad", [{"filename": "a/b.db"}, {"filename": ":memory:"}, {"busy_timeout_ms": -1}]
)
def test_options_are_validated(bad: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        SqliteStorageOptions(**bad)  # type: ignore[arg-type]


def test_newer_schema_is_refused(storage: SqliteStorage) -> None:
    with storage.transaction() as tx:
        storage.set_meta(tx, "schema_version", "99")
    storage.close()
    with pytest.raises(OctomemError, match="schema version 99"):
        SqliteStorage(storage.path)


def test_busy_timeout_bounds_the_wait_for_the_write_lock(tmp_path: Path) -> None:
    holder = SqliteStorage(tmp_path / "b.db")
    waiter = SqliteStorage(tmp_path / "b.db", busy_timeout_ms=150)
    try:
        with holder.transaction():
            start = time.monotonic()
            with pytest.raises(apsw.BusyError), waiter.transaction():
                pass
            assert 0.1 <= time.monotonic() - start < 5
    finally:
        holder.close()
        waiter.close()


def test_vec0_is_found_where_the_package_keeps_it() -> None:
    """The extension's path is found without importing ``sqlite_vec`` (its ``__init__``
    imports numpy), and is the one the package itself gives."""
    import sqlite_vec

    assert connection.vec0_path() == sqlite_vec.loadable_path()


def test_extension_loading_failure_is_a_friendly_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connection, "vec0_path", lambda: str(tmp_path / "no-such-vec0"))
    with pytest.raises(OctomemError, match="cannot load the sqlite-vec extension") as err:
        SqliteStorage(tmp_path / "x.db")
    assert isinstance(err.value.__cause__, apsw.Error)


def test_nested_transaction_is_a_savepoint(storage: SqliteStorage) -> None:
    with storage.transaction() as tx:
        storage.set_meta(tx, "outer", "kept")
        with pytest.raises(RuntimeError), storage.transaction() as inner:
            storage.set_meta(inner, "inner", "dropped")
            raise RuntimeError
    assert storage.get_meta("outer") == "kept" and storage.get_meta("inner") is None


def test_duplicate_document_id_and_closed_storage(storage: SqliteStorage) -> None:
    _add(storage, "first", id="same")
    with pytest.raises(OctomemError, match="already exists"):
        _add(storage, "second", id="same")
    assert storage.get_document("same").text == "first"  # type: ignore[union-attr]
    storage.close()
    with pytest.raises(OctomemError, match="closed"):
        storage.counts()


def test_filter_sql_fragment() -> None:
    assert filter_sql(Filters(include_superseded=True), "c") == ("1", [])
    assert filter_sql(Filters(), "c") == ("c.valid_to IS NULL", [])
    sql, params = filter_sql(Filters(kinds=("A", "B"), metadata={'we"ird.key': "v"}), "c")
    assert "c.kind IN (?, ?)" in sql and params[:2] == ["A", "B"] and params[-1] == "v"
    with pytest.raises(ValueError):
        filter_sql(Filters(), "c; DROP TABLE chunks")


def test_metadata_keys_with_dots_and_quotes(storage: SqliteStorage) -> None:
    cid = _add(storage, "odd keys", metadata={'we"ird.key': "v", "n": 2.5})
    _add(storage, "other", metadata={"we": {"ird": "v"}})
    for meta in ({'we"ird.key': "v"}, {"n": "2.5"}):
        assert [c.id for c in storage.iter_chunks(Filters(metadata=meta))] == [cid]


def test_arms_refuse_another_storage() -> None:
    for arm_class in (Fts5KeywordArm, SqliteVecSemanticArm):
        with pytest.raises(IncompatibleArmsError, match="requires storage 'sqlite'"):
            arm_class(object())


def test_knn_filters_are_constraints_of_the_vec0_scan(storage: SqliteStorage) -> None:
    arm = SqliteVecSemanticArm(storage)
    with storage.transaction() as tx:
        arm.bind(tx, "m", 4)
    filters = Filters(kinds=("A",), tags=("t",), created_after=1.0, created_before=9.0,
                      metadata={"k": "v"})
    assert arm.bound is not None
    sql, params = knn_sql(filters, arm.bound.table)
    plan = storage.connection().execute(
        "EXPLAIN QUERY PLAN " + sql, [np.ones(4, np.float32).tobytes(), 5, *params]).fetchall()
    vec_scan = next(row[3] for row in plan if "VIRTUAL TABLE" in row[3])
    # vec0 idxStr blocks: '{' query vector, '}' k, '[' rowid IN (...), '&' metadata constraint
    assert vec_scan.count("&") == 3 and "[" in vec_scan and "{" in vec_scan


def test_semantic_arm_edges(storage: SqliteStorage) -> None:
    arm = SqliteVecSemanticArm(storage)
    ids = [_add(storage, f"c{i}") for i in range(3)]
    assert arm.search(np.ones(4, np.float32), Filters(), 5) == []  # unbound
    assert arm.missing() == ids and arm.vectors(ids).shape == (3, 0)
    with pytest.raises(OctomemError, match="bind"), storage.transaction() as tx:
        arm.add(tx, ids[:1], np.ones((1, 4), np.float32))
    with storage.transaction() as tx:
        arm.bind(tx, "m", 4)
    with pytest.raises(OctomemError, match="zero"), storage.transaction() as tx:
        arm.add(tx, ids[:1], np.zeros((1, 4), np.float32))
    with pytest.raises(InvalidQueryError), storage.transaction() as tx:
        arm.add(tx, ids, np.ones((2, 4), np.float32))
    with storage.transaction() as tx:  # the 999 chunk was never stored (e.g. deleted meanwhile)
        arm.add(tx, [*ids, 999], np.eye(4, dtype=np.float32))
    assert arm.missing() == []
    assert arm.search(np.zeros(4, np.float32), Filters(), 5) == []
    assert len(arm.search(np.ones(4, np.float32), Filters(), KNN_MAX_K * 3)) == 3
    with storage.transaction() as tx:
        arm.reset(tx)
        arm.bind(tx, "other-model", 2)
    assert [s.model_id for s in arm.vector_sets()] == ["other-model"] and arm.missing() == ids


def test_vector_sets_are_registered_one_vec0_table_per_model(storage: SqliteStorage) -> None:
    arm = SqliteVecSemanticArm(storage)
    assert arm.vector_sets() == [] and arm.missing_count() == 0
    ids = [_add(storage, f"c{i}") for i in range(3)]
    assert arm.missing_count() == 3  # unbound: every chunk lacks a vector
    with storage.transaction() as tx:
        arm.bind(tx, "model-a", 4)
        arm.add(tx, ids, np.eye(4, dtype=np.float32)[:3])
        arm.bind(tx, "model-b", 2)
        arm.add(tx, ids[:1], np.ones((1, 2), np.float32))
    sets = arm.vector_sets()
    assert [(s.model_id, s.dim, s.table) for s in sets] == [
        ("model-a", 4, vector_table_name("model-a", 4)),
        ("model-b", 2, vector_table_name("model-b", 2)),
    ]
    assert vector_table_name("model-a", 4) == "vec_" + hashlib.sha256(
        b"model-a\x1f4").hexdigest()[:16]
    conn = storage.connection()
    counts = [conn.execute(f"SELECT count(*) FROM {s.table}").fetchone()[0] for s in sets]
    assert counts == [3, 1] and arm.missing_count() == 2 and arm.missing() == ids[1:]
    assert arm.bound is not None and arm.bound.table == sets[1].table


def test_an_index_from_before_vector_sets_is_adopted(storage: SqliteStorage) -> None:
    ids = [_add(storage, f"c{i}") for i in range(2)]
    with storage.transaction() as tx:  # the layout of octomem 0.1.0: one table, model in meta
        tx.execute("CREATE VIRTUAL TABLE vec_chunks USING vec0(chunk_id INTEGER PRIMARY KEY, "
                   "embedding float[4] distance_metric=cosine, kind TEXT, created_at FLOAT)")
        tx.execute("INSERT INTO vec_chunks (chunk_id, embedding, kind, created_at) "
                   "VALUES (?, ?, 'ITEM', 0.0)", (ids[0], np.eye(4, dtype=np.float32)[0].tobytes()))
        storage.set_meta(tx, "sqlite-vec.model_id", "old-model")
        storage.set_meta(tx, "sqlite-vec.dim", "4")
    arm = SqliteVecSemanticArm(storage)
    with storage.transaction() as tx:
        arm.bind(tx, "new-model", 4)
    assert arm.missing() == ids and arm.search(np.eye(4, dtype=np.float32)[0], Filters(), 5) == []
    with storage.transaction() as tx:
        arm.bind(tx, "old-model", 4)
    assert [(s.model_id, s.table) for s in arm.vector_sets()][0] == ("old-model", "vec_chunks")
    assert arm.missing() == ids[1:] and arm.missing_count() == 1
    assert [h.chunk_id for h in arm.search(np.eye(4, dtype=np.float32)[0], Filters(), 5)] == ids[:1]
    assert storage.get_meta("sqlite-vec.model_id") is None


def test_a_corrupt_file_is_an_error_naming_it_and_stays_untouched(tmp_path: Path) -> None:
    path = tmp_path / "t.sqlite3"
    store = SqliteStorage(path)
    _add(store, "something worth keeping " * 200)
    store.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # truncated, as a crash or a bad copy leaves it
    before = path.read_bytes()
    with pytest.raises(OctomemError, match=rf"^{path}: .*; octomem cannot read it and left "
                       "it as it is"):  # a search reads: "nothing was written" fit writes only
        SqliteStorage(path)
    assert path.read_bytes() == before
    path.write_bytes(b"this is not a database at all, just text" * 100)
    with pytest.raises(OctomemError, match=rf"^{path}: file is not a database"):
        SqliteStorage(path)
