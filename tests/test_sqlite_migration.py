"""A file written by the first schema (version 1) is migrated in place when opened."""

from __future__ import annotations

from pathlib import Path

import apsw

from octomem.engine.types import Chunk, Document, Filters
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
    reopened = SqliteStorage(path)  # a second open finds version 2 and changes nothing
    try:
        assert reopened.get_document("old").superseded_by == "new"  # type: ignore[union-attr]
    finally:
        reopened.close()
