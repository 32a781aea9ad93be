"""The SQLite storage's rows of new documents built from their chunks' texts
(``bulk_text_rows``, no chunk made) are those ``bulk_rows`` builds from the chunks the
pipeline makes of the same texts: every value, every stored chunk (read back), and what a
real file then holds."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

import pytest

from octomem.engine.pipeline import Pipeline
from octomem.engine.types import Document
from octomem.plugins.sqlite import changelog
from octomem.plugins.sqlite.bulk import bulk_rows, bulk_rows_of_texts, write_rows
from octomem.plugins.sqlite.storage import SqliteStorage


def _documents() -> list[Document]:
    return [
        Document("plain text", id="a", metadata={"group": "g1"}, created_at=1.7e9),
        Document("  padded text\n", id="b", created_at=1.7e9 + 1),  # stored text differs
        Document("titled", id="c", title="A title", uri="file:///c.md", kind="FACT",
                 tags=("x", "y"), event_time=1.2e9, created_at=1.7e9 + 2),
        Document("long one", id="d", metadata=MappingProxyType({"n": 1, "z": [1.5, None]}),
                 revision=3, valid_to=1.8e9, created_at=1.7e9 + 3),
        Document("Ünïcode ∑ text", id="e", tags=["list", "tags"],  # type: ignore[arg-type]
                 created_at=1.7e9 + 4),
    ]


def _texts(documents: list[Document]) -> list[list[str]]:
    split = {"d": ["long", "one"]}  # a document of two chunks
    return [split.get(d.id, [d.text.strip()]) for d in documents]


def test_rows_of_texts_are_the_rows_of_the_pipelines_chunks() -> None:
    docs, texts = _documents(), _texts(_documents())
    by_chunks = bulk_rows([(d, Pipeline._chunks_of(d, t))
                           for d, t in zip(docs, texts, strict=True)])
    by_texts = bulk_rows_of_texts(docs, texts)
    assert by_texts.documents == by_chunks.documents
    assert by_texts.rows == by_chunks.rows
    assert by_texts.chunks is None  # not made: the stored chunks are read back by id
    assert by_texts.sizes == by_chunks.sizes == [1, 1, 1, 2, 1]
    assert [row[1] for row in by_texts.documents] == ["", "  padded text\n", "", "long one", ""]
    assert [row[9:] for row in by_texts.rows] == [
        (d.valid_from, d.valid_to, d.revision) for d in (*docs[:4], docs[3], docs[4])]


def test_a_store_written_from_texts_holds_what_add_documents_writes(tmp_path: Path) -> None:
    docs, texts = _documents(), _texts(_documents())
    stores = SqliteStorage(tmp_path / "texts.sqlite"), SqliteStorage(tmp_path / "pairs.sqlite")
    with stores[0].transaction() as tx:
        stored = stores[0].add_text_rows(tx, stores[0].bulk_text_rows(docs, texts))
        read_in_tx = stores[0].get_chunks(stored)
    with stores[1].transaction() as tx:
        expected = stores[1].add_documents(
            tx, [(d, Pipeline._chunks_of(d, t)) for d, t in zip(docs, texts, strict=True)])
    assert stored == [1, 2, 3, 4, 5, 6]
    assert [[c.id for c in own] for own in expected] == [[1], [2], [3], [4, 5], [6]]
    flat = [c for own in expected for c in own]
    assert read_in_tx == flat and stores[0].get_chunks(stored) == flat
    for table in ("documents", "chunks", "vector_log", "sqlite_sequence"):
        columns = "*" if table != "vector_log" else (  # a transaction's seal: a random number
            f"seq, table_name, iif(table_name = '{changelog.SEAL}', 0, chunk_id)")
        rows = [s.connection().execute(f"SELECT {columns} FROM {table} ORDER BY rowid").fetchall()
                for s in stores]
        assert rows[0] == rows[1] and rows[0], table
    assert stores[0].get_document("b").text == "  padded text\n"
    assert stores[0].get_document("a").text == "plain text"
    for s in stores:
        s.close()


def test_rows_of_texts_given_to_write_rows_are_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    docs, texts = _documents(), _texts(_documents())
    store = SqliteStorage(tmp_path / "store.sqlite")
    with pytest.raises(ValueError, match="write_text_rows"):  # no transaction to roll back
        write_rows(store.connection(), bulk_rows_of_texts(docs, texts))
    assert store.counts() == {"documents": 0, "chunks": 0}
    store.close()
