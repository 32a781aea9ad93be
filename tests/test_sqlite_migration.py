"""A file written by the first schema (version 1) is migrated in place when opened."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from octomem.engine.errors import OctomemError
from octomem.engine.sql.rows import document_params
from octomem.engine.types import Chunk, Document, Filters
from octomem.plugins.sqlite import schema
from octomem.plugins.sqlite.schema import SCHEMA_VERSION
from octomem.plugins.sqlite.storage import SqliteStorage

#: The version-1 schema, as octomem 0.1.0 created it.
V1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
INSERT INTO meta VALUES ('schema_version', '1');
CREATE TABLE documents (
    id TEXT PRIMARY KEY, text TEXT NOT NULL, title TEXT, uri TEXT, kind TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]', created_at REAL NOT NULL, event_time REAL,
    metadata TEXT NOT NULL DEFAULT '{}', content_hash TEXT NOT NULL
);
CREATE INDEX documents_content_hash ON documents(content_hash);
CREATE TABLE chunks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL, text TEXT NOT NULL, kind TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]', created_at REAL NOT NULL, title TEXT, uri TEXT,
    metadata TEXT NOT NULL DEFAULT '{}'
);
INSERT INTO documents VALUES ('old', 'kept text', NULL, NULL, 'FACT', '["t"]', 100.0, 40.0,
                              '{}', 'h');
INSERT INTO chunks (document_id, ordinal, text, kind, tags, created_at, metadata)
    VALUES ('old', 0, 'kept text', 'FACT', '["t"]', 100.0, '{}');
"""


def test_version_1_file_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "octomem.sqlite3"
    conn = apsw.Connection(str(path))
    conn.execute(V1)
    conn.close()
    storage = SqliteStorage(path)
    try:
        assert storage.get_meta("schema_version") == str(SCHEMA_VERSION)
        doc = storage.get_document("old")
        assert doc is not None and (doc.revision, doc.recalls, doc.valid_to) == (1, 0, None)
        (chunk,) = storage.iter_chunks(Filters())
        assert (chunk.valid_from, chunk.valid_to, chunk.revision) == (40.0, None, 1)
        new = Document("new text", id="new", created_at=200.0)
        with storage.transaction() as tx:
            storage.add_document(tx, new, [Chunk("new", 0, "new text")])
            storage.supersede(tx, "old", "new", 200.0)
        assert [c.document_id for c in storage.iter_chunks(Filters())] == ["new"]
        assert storage.history_counts() == {"current": 1, "superseded": 1, "forgotten": 0,
                                            "newest_document_at": 200.0}
    finally:
        storage.close()
    reopened = SqliteStorage(path)  # a second open finds the version and changes nothing
    try:
        assert reopened.get_document("old").superseded_by == "new"  # type: ignore[union-attr]
    finally:
        reopened.close()


def _raw_text(path: Path, document_id: str) -> str:
    conn = apsw.Connection(str(path))
    try:
        return str(conn.execute("SELECT text FROM documents WHERE id = ?",
                                (document_id,)).fetchone()[0])
    finally:
        conn.close()


def test_version_2_file_opens_reads_the_same_and_new_text_is_stored_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "octomem.sqlite3"
    with monkeypatch.context() as old:  # the file as a version-2 octomem wrote it
        old.setattr(schema, "SCHEMA_VERSION", 2)
        old.setattr("octomem.plugins.sqlite.storage.stored_params",
                    lambda document, chunks: document_params(document))
        storage = SqliteStorage(path)
        with storage.transaction() as tx:
            storage.add_document(tx, Document("old text", id="old"), [Chunk("old", 0, "old text")])
        assert storage.get_meta("schema_version") == "2"
        storage.close()
    assert _raw_text(path, "old") == "old text"  # the text twice, as version 2 kept it
    storage = SqliteStorage(path)
    try:
        assert storage.get_meta("schema_version") == "3" == str(SCHEMA_VERSION)
        assert storage.get_document("old").text == "old text"  # type: ignore[union-attr]
        assert [d.id for d in storage.find_documents("old text")] == ["old"]
        with storage.transaction() as tx:
            storage.add_document(tx, Document("new text", id="new"), [Chunk("new", 0, "new text")])
            storage.add_document(tx, Document("two parts", id="two"),
                                 [Chunk("two", 0, "two"), Chunk("two", 1, "parts")])
            storage.add_documents(tx, [
                (Document(" padded ", id="pad"), [Chunk("pad", 0, "padded")]),
                (Document("bulk text", id="bulk"), [Chunk("bulk", 0, "bulk text")])])
        assert [_raw_text(path, i) for i in ("old", "new", "two", "pad", "bulk")] == [
            "old text", "", "two parts", " padded ", ""]  # once where the chunk holds it all
        for doc_id, text in (("new", "new text"), ("two", "two parts"), ("pad", " padded "),
                             ("bulk", "bulk text")):
            assert storage.get_document(doc_id).text == text  # type: ignore[union-attr]
            assert [d.id for d in storage.find_documents(text)] == [doc_id]
        assert storage.find_documents("") == []  # '' is no document's text
        with storage.transaction() as tx:  # the storage API alone: empty, no chunk
            storage.add_document(tx, Document("", id="empty"), [])
        assert storage.get_document("empty").text == ""  # type: ignore[union-attr]
        with storage.transaction() as tx:
            storage.delete_document(tx, "empty")
        with storage.transaction() as tx:  # a new revision: its own chunk holds its text
            storage.revise_document(tx, Document("newer text", id="new", created_at=300.0),
                                    [Chunk("new", 0, "newer text")])
        assert _raw_text(path, "new") == ""
        assert storage.get_document("new").text == "newer text"  # type: ignore[union-attr]
        assert [c.text for c in storage.document_chunks("new")] == ["new text", "newer text"]
        assert storage.find_documents("new text") == []
        texts = {d.id: d.text for d in storage.iter_documents(include_superseded=True)}
        assert texts == {"old": "old text", "new": "newer text", "two": "two parts",
                         "pad": " padded ", "bulk": "bulk text"}
    finally:
        storage.close()
    reopened = SqliteStorage(path)  # version 3 again: nothing rewritten
    try:
        assert reopened.get_meta("schema_version") == "3"
    finally:
        reopened.close()
    monkeypatch.setattr(schema, "SCHEMA_VERSION", 2)  # an older octomem refuses the file
    with pytest.raises(OctomemError, match="schema version 3, newer than the 2"):
        SqliteStorage(path)


def test_a_store_that_cannot_be_opened_is_named_with_its_folder(tmp_path: Path) -> None:
    """SQLite's bare "unable to open database file" becomes one line naming the file and
    the folder that must be writable (a read-only data folder, a folder that is gone)."""
    from octomem.plugins.sqlite.connection import open_connection

    path = tmp_path / "gone" / "octomem.sqlite3"
    with pytest.raises(OctomemError) as caught:
        open_connection(path, 1000)
    assert str(caught.value) == (
        f"cannot open the store {path} (unable to open database file); octomem writes the "
        f"file and its -wal and -shm files beside it even to read, so {path.parent} must "
        "exist and be writable")
