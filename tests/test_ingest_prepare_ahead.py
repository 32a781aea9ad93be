"""Ingest prepares (counts, chunks) the next batch in a worker thread while it writes one:
the same stores, reports and errors as batch after batch; the storage only in the
caller's thread."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from octomem.engine import pipeline as pipeline_module
from octomem.engine import writes
from octomem.engine.errors import InvalidQueryError
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document, Query


def _pipeline(root: Path) -> Pipeline:
    settings = load_settings(None, {"pipeline": {"embedder": "hashing"},
                                    "arms": {"hashing": {"max_tokens": 12}}})
    return Pipeline(settings, load_registry(), root)


def _documents() -> list[Document]:
    long_text = " ".join(f"word{i}" for i in range(40))  # split into several chunks
    docs = [Document(f"note {i} about {'cats' if i % 2 else 'dogs'}", id=f"n{i}",
                     metadata={"group": f"g{i % 3}"}) for i in range(70)]
    docs[33:33] = [Document(long_text, id="long", title="Title"),
                   Document("first copy", id="dup"), Document("second copy", id="dup")]
    return docs


def _one_after_another(pipeline: Pipeline, batches: Iterable[list[Document]]
                       ) -> Iterator[writes.Prepared]:
    return (writes.prepare(pipeline, batch) for batch in batches)


def _dump(pipeline: Pipeline) -> dict[str, list[tuple[object, ...]]]:
    conn = pipeline.arms.storage.connection()
    return {
        "documents": conn.execute("SELECT id, text, title, revision, content_hash FROM "
                                  "documents ORDER BY id").fetchall(),
        "chunks": conn.execute("SELECT id, document_id, ordinal, text, metadata, revision "
                               "FROM chunks ORDER BY id").fetchall(),
        "fts": conn.execute("SELECT rowid FROM fts5_chunks ORDER BY rowid").fetchall(),
    }


def test_batches_prepared_ahead_store_what_batch_after_batch_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writes, "DOCS_PER_TRANSACTION", 16)  # 5 batches
    stores, reports = [], []
    for name, ahead in (("ahead", True), ("plain", False)):
        with monkeypatch.context() as patch:
            if not ahead:
                patch.setattr(pipeline_module, "prepared", _one_after_another)
            pipeline = _pipeline(tmp_path / name)
            seen: list[int] = []
            reports.append(pipeline.add(_documents(), seen.append, embed=False))
            assert seen == [16, 16, 16, 16, 9]
            stores.append(pipeline)
    ahead, plain = stores
    assert _dump(ahead) == _dump(plain)
    assert len(_dump(ahead)["chunks"]) == 72 + 4  # "dup" replaced; "long" in 5 chunks
    a, b = reports
    assert (a.added, a.replaced, a.chunks, a.chunk_ids) == (
        b.added, b.replaced, b.chunks, b.chunk_ids)
    for q in ("cats", "word7", "second copy"):
        assert ([(h.chunk.id, h.score) for h in ahead.search(Query(q)).hits]
                == [(h.chunk.id, h.score) for h in plain.search(Query(q)).hits])
    ahead.close()
    plain.close()


def test_counting_runs_ahead_and_the_storage_in_the_callers_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writes, "DOCS_PER_TRANSACTION", 16)
    pipeline = _pipeline(tmp_path / "store")
    storage, embedder = pipeline.arms.storage, pipeline.arms.embedder
    counted: list[str] = []
    stored: list[str] = []
    count, add = embedder.count_tokens, storage.add_documents

    def count_spy(texts: list[str]) -> list[int]:
        counted.append(threading.current_thread().name)
        return count(texts)

    def add_spy(tx: object, pairs: list[object]) -> object:
        stored.append(threading.current_thread().name)
        return add(tx, pairs)

    monkeypatch.setattr(embedder, "count_tokens", count_spy)
    monkeypatch.setattr(storage, "add_documents", add_spy)
    pipeline.add(_documents(), embed=False)
    main = threading.current_thread().name
    assert stored and set(stored) == {main}
    assert any(name.startswith("octomem-prepare") for name in counted)  # batches 2-5
    assert not any(t.name.startswith("octomem-prepare") for t in threading.enumerate())
    pipeline.close()


def test_an_empty_text_stops_at_its_batch_after_the_ones_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writes, "DOCS_PER_TRANSACTION", 16)
    pipeline = _pipeline(tmp_path / "store")
    docs = _documents()[:60]
    docs[40] = Document("  ", id="empty")  # in the third batch
    with pytest.raises(InvalidQueryError, match="'empty'"):
        pipeline.add(docs, embed=False)
    conn = pipeline.arms.storage.connection()
    assert conn.execute("SELECT count(*) FROM documents").get == 32  # batches 1 and 2
    pipeline.close()


def test_a_failed_write_leaves_its_batch_out_and_no_thread_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writes, "DOCS_PER_TRANSACTION", 16)
    pipeline = _pipeline(tmp_path / "store")
    storage = pipeline.arms.storage
    calls: list[str] = []

    def failing(name: str) -> object:
        # whichever way a batch of new documents is written (from the rows the worker
        # built from the chunks' texts, add_text_rows, or from its chunks, add_rows, or
        # by add_documents), the second batch's write fails
        real = getattr(storage, name)

        def write(*args: object) -> object:
            calls.append(name)
            if len(calls) == 2:
                raise OSError("disk full")
            return real(*args)

        return write

    for name in ("add_documents", "add_rows", "add_text_rows"):
        monkeypatch.setattr(storage, name, failing(name))
    with pytest.raises(OSError, match="disk full"):
        pipeline.add(_documents(), embed=False)
    assert calls == ["add_text_rows", "add_text_rows"]
    conn = storage.connection()
    assert conn.execute("SELECT count(*) FROM documents").get == 16
    assert conn.execute("SELECT count(*) FROM fts5_chunks_docsize").get == 16
    assert not any(t.name.startswith("octomem-prepare") for t in threading.enumerate())
    pipeline.close()
