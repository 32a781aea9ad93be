"""The ``sqlite`` storage's ``chunk_of`` builds the chunk the constructor builds from a real
store's rows: tags, metadata, times, titles, superseded rows and old revisions."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from octomem.engine.sql.rows import row_fields
from octomem.engine.types import Chunk, Document
from octomem.plugins.sqlite.rows import CHUNK_COLUMNS, chunk_of
from octomem.plugins.sqlite.storage import SqliteStorage


def test_chunk_of_is_the_constructors_chunk(tmp_path: Path) -> None:
    store = SqliteStorage(tmp_path / "t.sqlite3")
    try:
        docs = [
            Document(text="plain words"),
            Document(text="tagged", tags=("a", "b"), title="T", uri="file:///x",
                     metadata={"conv_id": "conv-26", "n": 3, "nested": {"k": [1, 2]}}),
            Document(text="é ü 中文", kind="DOC", created_at=1700000000.5,
                     metadata={"speaker": "Caroline"}),
        ]
        with store.transaction() as tx:
            for doc in docs:
                chunks = [Chunk(document_id=doc.id, ordinal=i, text=f"{doc.text} {i}")
                          for i in range(2)]
                store.add_document(tx, doc, chunks)
        rows = store.connection().execute(f"SELECT {CHUNK_COLUMNS} FROM chunks").fetchall()
        assert len(rows) == 6
        for row in rows:
            got, want = chunk_of(row), Chunk(**row_fields(CHUNK_COLUMNS, row))
            assert got == want and repr(got) == repr(want)
            assert type(got.tags) is tuple and type(got.metadata) is dict
        assert chunk_of(rows[2]).metadata["nested"] == {"k": [1, 2]}
        assert chunk_of(rows[2]).tags == ("a", "b")
        assert store.get_chunks([r[0] for r in rows]) == [chunk_of(r) for r in rows]
        with pytest.raises(dataclasses.FrozenInstanceError):
            chunk_of(rows[0]).text = "x"  # type: ignore[misc]
        with pytest.raises(ValueError):
            chunk_of(rows[0][:-1])  # a row of other columns
    finally:
        store.close()
