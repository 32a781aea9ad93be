"""Ingest counts the tokens of a transaction's documents in one call, chunking alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from octomem.engine import writes
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import DOCS_PER_TRANSACTION, Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.sql.rows import inherit
from octomem.engine.types import Chunk, Document, Filters
from octomem.plugins.sqlite import bulk as bulk_writes


def test_one_count_call_per_batch_and_the_same_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = load_settings(None, {"pipeline": {"embedder": "hashing"},
                                    "arms": {"hashing": {"max_tokens": 8}}})
    pipeline = Pipeline(settings, load_registry(), tmp_path / "store")
    embedder = pipeline.arms.embedder
    calls: list[int] = []
    original = embedder.count_tokens

    def spy(texts: list[str]) -> list[int]:
        calls.append(len(texts))
        return original(texts)

    monkeypatch.setattr(embedder, "count_tokens", spy)
    monkeypatch.setattr(writes, "DOCS_PER_TRANSACTION", 64)
    short = [Document(f"note number {i}", id=f"s{i}") for i in range(64)]
    long_text = " ".join(f"word{i}" for i in range(30))  # 30 words: split at 8 per chunk
    report = pipeline.add([*short, Document(long_text, id="long", title="A title")],
                          embed=False)
    # the probe, then one call per batch of whole texts (+ the long text's pieces)
    assert calls[1] == 64 and calls[2] == 2
    assert report.chunks == 64 + 5
    chunks = pipeline.arms.storage.document_chunks("long")
    assert [len(c.text.split()) for c in chunks] == [6, 6, 6, 6, 6]  # budget 8 - title's 2
    assert " ".join(c.text for c in chunks) == long_text
    pipeline.close()


def _dump(pipeline: Pipeline) -> dict[str, list[tuple[object, ...]]]:
    """Every stored row that ingest writes: documents, chunks, the FTS5 rows."""
    conn = pipeline.arms.storage.connection()
    return {
        "documents": conn.execute("SELECT id, text, title, kind, tags, metadata, revision, "
                                  "content_hash FROM documents ORDER BY id").fetchall(),
        "chunks": conn.execute("SELECT id, document_id, ordinal, text, kind, tags, title, "
                               "metadata, valid_to IS NULL, revision FROM chunks "
                               "ORDER BY id").fetchall(),
        "fts": conn.execute("SELECT rowid, body FROM fts5_chunks ORDER BY rowid").fetchall(),
    }


def _ingest(root: Path, bulk: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[Pipeline, list]:
    class NoBulk:  # no storage is an instance: every document goes one by one
        pass

    with monkeypatch.context() as patch:
        if not bulk:
            patch.setattr(writes, "BulkStorage", NoBulk)
        else:  # several INSERT ... VALUES statements per table and batch
            patch.setattr(bulk_writes, "ROWS_PER_STATEMENT", 7)
        settings = load_settings(None, {"pipeline": {"embedder": "hashing"},
                                        "arms": {"hashing": {"max_tokens": 12}}})
        pipeline = Pipeline(settings, load_registry(), root)
        long_text = " ".join(f"word{i}" for i in range(40))
        first = [Document(f"note {i} about cats", id=f"n{i}", kind="NOTE", tags=("t",),
                          metadata={"group": f"g{i % 3}"}) for i in range(150)]
        first += [Document(long_text, id="long", title="Title"),
                  Document("twice in one batch", id="dup"), Document("again, changed", id="dup")]
        reports = [pipeline.add(first, embed=False)]
        second = [Document("note 5 about cats", id="n5", kind="NOTE", tags=("t",),
                           metadata={"group": "g2"}),  # unchanged
                  Document("a new text for seven", id="n7"), Document("brand new", id="x1")]
        reports.append(pipeline.add(second, embed=False))
    return pipeline, reports


def test_batched_writes_store_what_one_by_one_writes_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bulk, bulk_reports = _ingest(tmp_path / "bulk", True, monkeypatch)
    alone, alone_reports = _ingest(tmp_path / "alone", False, monkeypatch)
    assert _dump(bulk) == _dump(alone)
    for a, b in zip(bulk_reports, alone_reports, strict=True):
        assert (a.added, a.replaced, a.unchanged, a.chunks, a.chunk_ids) == (
            b.added, b.replaced, b.unchanged, b.chunks, b.chunk_ids)
    assert bulk_reports[1].unchanged == ["n5"] and bulk_reports[1].replaced == ["n7"]
    assert "dup" in bulk_reports[0].replaced  # its second copy replaced the first
    from octomem.engine.types import Query
    for q in ("cats", "word7", "brand new"):
        assert ([(h.chunk.id, h.score) for h in bulk.search(Query(q)).hits]
                == [(h.chunk.id, h.score) for h in alone.search(Query(q)).hits])
    bulk.close()
    alone.close()


def test_a_bad_document_in_a_batch_stores_nothing_of_it(tmp_path: Path) -> None:
    settings = load_settings(None, {"pipeline": {"embedder": "hashing"}})
    pipeline = Pipeline(settings, load_registry(), tmp_path / "store")
    docs = [Document(f"fine {i}", id=f"f{i}") for i in range(10)]
    docs.insert(5, Document("bad metadata", id="bad", metadata={"when": object()}))
    with pytest.raises(Exception, match="metadata"):
        pipeline.add(docs, embed=False)
    conn = pipeline.arms.storage.connection()
    assert conn.execute("SELECT count(*) FROM documents").fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM fts5_chunks").fetchone() == (0,)
    pipeline.close()


def test_transactions_are_capped_by_documents_and_by_characters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert DOCS_PER_TRANSACTION == 1024
    monkeypatch.setattr(writes, "TEXT_PER_TRANSACTION", 100)
    settings = load_settings(None, {"pipeline": {"embedder": "hashing"}})
    pipeline = Pipeline(settings, load_registry(), tmp_path / "store")
    sizes: list[int] = []
    docs = [Document("x" * 40, id=f"a{i}") for i in range(5)] + [Document("y" * 300, id="big")]
    docs += [Document("z" * 10, id=f"b{i}") for i in range(3)]
    pipeline.add(docs, sizes.append, embed=False)
    assert sizes == [2, 2, 1, 1, 3]  # 80 chars, 80, 40, one longer than the cap alone, 30
    sizes.clear()
    more = [Document(f"note {i}", id=f"c{i}") for i in range(7)]
    pipeline.add(more, sizes.append, embed=False, per_transaction=3)  # a count, whatever the size
    assert sizes == [3, 3, 1]
    assert pipeline.arms.storage.counts()["documents"] == 16
    pipeline.close()


def test_inherit_sets_every_chunk_field_as_before() -> None:
    from dataclasses import fields, replace

    assert [f.name for f in fields(Chunk)] == [
        "document_id", "ordinal", "text", "id", "kind", "tags", "created_at", "title", "uri",
        "metadata", "valid_from", "valid_to", "revision"]  # a new field: inherit must set it
    doc = Document("text", id="d", title="T", uri="u", kind="NOTE", tags=("a", "b"),
                   created_at=5.0, event_time=3.0, metadata={"x": 1, "y": 0}, revision=3)
    for chunk in (Chunk(document_id="?", ordinal=2, text="c", id=7, kind="K", tags=("z",),
                        created_at=1.0, uri="cu", metadata={"y": 2}, valid_from=1.5,
                        valid_to=2.5, revision=2),
                  Chunk(document_id="?", ordinal=0, text="c", title="own")):
        retired = 0 < chunk.revision < doc.revision
        expected = replace(
            chunk, document_id="d", kind="NOTE", tags=("a", "b"), created_at=5.0,
            title=chunk.title or "T", uri=chunk.uri or "u",
            metadata={"x": 1, "y": 0, **chunk.metadata},
            valid_from=chunk.valid_from if retired else 3.0,
            valid_to=chunk.valid_to if retired else None,
            revision=chunk.revision if retired else 3)
        assert inherit(chunk, doc) == expected


def test_bulk_chunk_ids_are_those_sqlite_gave(tmp_path: Path) -> None:
    """New chunks' ids are not read back row by row: after a forget (AUTOINCREMENT never
    reuses an id) and when the ids are not consecutive (a trigger moves the sequence on),
    each stored chunk's id is the one its row has."""
    settings = load_settings(None, {"pipeline": {"embedder": "hashing"},
                                    "arms": {"hashing": {"max_tokens": 8}}})
    pipeline = Pipeline(settings, load_registry(), tmp_path / "store")
    conn = pipeline.arms.storage.connection()

    def stored(report_ids: list[int]) -> list[tuple[int, str, int]]:
        rows = {r[0]: r for r in conn.execute("SELECT id, document_id, ordinal FROM chunks")}
        return [rows[i] for i in report_ids]

    first = pipeline.add([Document(f"first note {i}", id=f"a{i}") for i in range(3)],
                         embed=False)
    assert stored(first.chunk_ids) == [(1, "a0", 0), (2, "a1", 0), (3, "a2", 0)]
    pipeline.forget("a2")  # id 3 is gone, and never given again
    long_text = " ".join(f"word{i}" for i in range(12))  # two chunks at 8 tokens
    second = pipeline.add([Document("second note", id="b0"), Document(long_text, id="b1")],
                          embed=False)
    assert stored(second.chunk_ids) == [(4, "b0", 0), (5, "b1", 0), (6, "b1", 1)]
    # a gap inside one batch: ids from the sequence, read back in order
    conn.execute("CREATE TEMP TRIGGER skip AFTER INSERT ON chunks WHEN NEW.ordinal = 0 BEGIN "
                 "INSERT INTO chunks (id, document_id, ordinal, text, kind, created_at) "
                 "VALUES (NEW.id + 10, NEW.document_id, -1, '', 'item', 0); "
                 "DELETE FROM chunks WHERE id = NEW.id + 10; END")
    third = pipeline.add([Document(long_text, id="c0"), Document("third note", id="c1")],
                         embed=False)
    assert stored(third.chunk_ids) == [(7, "c0", 0), (18, "c0", 1), (19, "c1", 0)]
    assert [c.id for c in pipeline.arms.storage.document_chunks("c0")] == [7, 18]
    hits = pipeline.arms.keyword.search("third", Filters(), 5)
    assert [h.chunk_id for h in hits] == [19]
    pipeline.close()
