"""The content-hash index keeps the hash's first 8 hex digits (round 11 of issue 15's
ingest): new files get it, a file with the index on the whole hash is migrated in its
opening transaction, a failed migration leaves that file as it was, and documents are
found by their text as before (the full hash and the text still compared)."""

from __future__ import annotations

import hashlib
import itertools
from pathlib import Path

import apsw
import pytest

from octomem.engine.types import Chunk, Document
from octomem.plugins.sqlite import schema
from octomem.plugins.sqlite.storage import SqliteStorage

#: The index every file had before round 11.
OLD_INDEX = "CREATE INDEX IF NOT EXISTS documents_content_hash ON documents(content_hash);"


def _indexes(path: Path) -> dict[str, str]:
    conn = apsw.Connection(str(path))
    try:
        return {name: sql for name, sql in conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'documents' "
            "AND sql IS NOT NULL")}
    finally:
        conn.close()


def _prefix_twins() -> tuple[str, str]:
    """Return two texts whose sha256 hex digests share their first 8 digits (a birthday
    search over numbered texts: ~77k hashes on average)."""
    seen: dict[str, str] = {}
    for i in itertools.count():
        text = f"text {i}"
        prefix = hashlib.sha256(text.encode()).hexdigest()[:schema.HASH_PREFIX]
        if prefix in seen:
            return seen[prefix], text
        seen[prefix] = text
    raise AssertionError("unreachable")


def _store_texts(storage: SqliteStorage, texts: dict[str, str]) -> None:
    with storage.transaction() as tx:
        storage.add_documents(tx, [(Document(text, id=doc_id, created_at=float(n)),
                                    [Chunk(doc_id, 0, text)])
                                   for n, (doc_id, text) in enumerate(texts.items())])


def test_a_new_store_indexes_the_prefix_and_finds_documents_by_it(tmp_path: Path) -> None:
    one, twin = _prefix_twins()
    assert one != twin
    path = tmp_path / "octomem.sqlite3"
    storage = SqliteStorage(path)
    try:
        _store_texts(storage, {"a": one, "b": twin, "c": one, "d": "another text"})
        with storage.transaction() as tx:  # two chunks: the text kept in documents too
            storage.add_document(tx, Document("two parts", id="e", created_at=9.0),
                                 [Chunk("e", 0, "two"), Chunk("e", 1, "parts")])
        assert [d.id for d in storage.find_documents(one)] == ["a", "c"]  # oldest first
        assert [d.id for d in storage.find_documents(twin)] == ["b"]  # same prefix, not found
        assert [d.id for d in storage.find_documents("two parts")] == ["e"]
        assert storage.find_documents("no such text") == []
        plan = " ".join(str(row[-1]) for row in storage.connection().execute(
            "EXPLAIN QUERY PLAN SELECT id FROM documents WHERE "
            f"{schema.HASH_KEY} = ? AND content_hash = ?", ("x", "y")))
        assert "USING INDEX documents_content_prefix" in plan
    finally:
        storage.close()
    assert set(_indexes(path)) == {"documents_content_prefix", "documents_kind_created"}
    assert "substr(content_hash, 1, 8)" in _indexes(path)["documents_content_prefix"]


def _old_store(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Write a store as octomem wrote it before round 11: the index on the whole hash."""
    with monkeypatch.context() as old:
        old.setattr(schema, "HASH_INDEX", OLD_INDEX)
        storage = SqliteStorage(path)
        try:
            _store_texts(storage, {"a": "first text", "b": "second text", "c": "first text"})
        finally:
            storage.close()
    assert set(_indexes(path)) == {"documents_content_hash", "documents_kind_created"}


def test_a_store_with_the_whole_hash_index_is_migrated_and_answers_the_same(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "octomem.sqlite3"
    _old_store(path, monkeypatch)
    storage = SqliteStorage(path)
    try:
        assert set(_indexes(path)) == {"documents_content_prefix", "documents_kind_created"}
        assert [d.id for d in storage.find_documents("first text")] == ["a", "c"]
        assert [d.id for d in storage.find_documents("second text")] == ["b"]
        assert storage.get_meta("schema_version") == str(schema.SCHEMA_VERSION)
        assert storage.connection().execute("PRAGMA integrity_check").get == "ok"
    finally:
        storage.close()


def test_a_failed_migration_leaves_the_old_store_as_it_was(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The new index's name is taken by a table: creating it fails after the old index was
    dropped, in the same transaction, so the file keeps its old index and every row."""
    path = tmp_path / "octomem.sqlite3"
    _old_store(path, monkeypatch)
    conn = apsw.Connection(str(path))
    conn.execute("CREATE TABLE documents_content_prefix (x)")
    before = conn.execute("SELECT * FROM documents ORDER BY rowid").fetchall()
    conn.close()
    with pytest.raises(apsw.SQLError, match="already a table named documents_content_prefix"):
        SqliteStorage(path)
    assert set(_indexes(path)) == {"documents_content_hash", "documents_kind_created"}
    conn = apsw.Connection(str(path))
    try:
        assert conn.execute("SELECT * FROM documents ORDER BY rowid").fetchall() == before
    finally:
        conn.close()
