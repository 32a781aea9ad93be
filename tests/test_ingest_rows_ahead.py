"""Ingest builds a batch's storage rows in the worker thread too (``TextBulkStorage``:
``bulk_text_rows`` of the chunks' texts there, ``add_text_rows`` in the caller's
transaction; ``PreparedBulkStorage``'s ``bulk_rows`` / ``add_rows`` of made chunks for a
storage without it), with the GIL's switch interval lowered meanwhile: the same stores
and errors as ``add_documents``, on a real SQLite file."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from octomem.engine import pipeline as pipeline_module
from octomem.engine import switching, writes
from octomem.engine.arms import TextBulkStorage
from octomem.engine.errors import OctomemError
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document, Query
from octomem.plugins.sqlite import changelog


def _pipeline(root: Path) -> Pipeline:
    settings = load_settings(None, {"pipeline": {"embedder": "hashing"},
                                    "arms": {"hashing": {"max_tokens": 12}}})
    return Pipeline(settings, load_registry(), root)


def _documents(n: int = 70) -> list[Document]:
    long_text = " ".join(f"word{i}" for i in range(40))  # several chunks
    docs = [Document(f"note {i} about {'cats' if i % 2 else 'dogs'}", id=f"n{i}",
                     title="T" if i % 5 == 0 else None, tags=("a",) if i % 4 else (),
                     metadata={"group": f"g{i % 3}"}, event_time=1e9 + i if i % 7 else None,
                     created_at=1.7e9 + i)
            for i in range(n)]
    docs[20:20] = [Document(long_text, id="long", title="Title", created_at=1.7e9)]
    return docs


def _dump(pipeline: Pipeline) -> dict[str, list[tuple[object, ...]]]:
    conn = pipeline.arms.storage.connection()
    tables = {"documents": "id", "chunks": "id", "fts5_chunks_docsize": "id",
              "vector_log": "seq", "sqlite_sequence": "name"}
    seal = f"seq, table_name, iif(table_name = '{changelog.SEAL}', 0, chunk_id)"  # random
    return {t: conn.execute(f"SELECT {seal if t == 'vector_log' else '*'} FROM {t} "
                            f"ORDER BY {key}").fetchall()
            for t, key in tables.items()}


def _spy(monkeypatch: pytest.MonkeyPatch, owner: object, name: str,
         threads: list[tuple[str, str]]) -> None:
    real = getattr(owner, name)

    def spy(*args: object) -> object:
        threads.append((name, threading.current_thread().name))
        return real(*args)

    monkeypatch.setattr(owner, name, spy)


def test_rows_built_in_the_worker_store_what_add_documents_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writes, "DOCS_PER_TRANSACTION", 16)  # 5 batches
    ahead = _pipeline(tmp_path / "ahead")
    assert isinstance(ahead.arms.storage, TextBulkStorage)
    calls: list[tuple[str, str]] = []
    for name in ("bulk_text_rows", "add_text_rows", "bulk_rows", "add_rows", "add_documents"):
        _spy(monkeypatch, ahead.arms.storage, name, calls)
    report = ahead.add(_documents(), embed=False)
    main = threading.current_thread().name
    assert {t for n, t in calls if n == "add_text_rows"} == {main}
    assert ("bulk_text_rows", main) in calls  # the first batch: before the thread starts
    assert any(n == "bulk_text_rows" and t.startswith("octomem-prepare") for n, t in calls)
    assert {n for n, _ in calls} == {"bulk_text_rows", "add_text_rows"}
    with monkeypatch.context() as patch:  # rows of made chunks (PreparedBulkStorage's)
        patch.setattr(writes, "TextBulkStorage", type("No", (), {}))
        pairs = _pipeline(tmp_path / "pairs")
        pair_calls: list[tuple[str, str]] = []
        for name in ("bulk_text_rows", "bulk_rows", "add_rows"):
            _spy(patch, pairs.arms.storage, name, pair_calls)
        pairs_report = pairs.add(_documents(), embed=False)
    assert {n for n, _ in pair_calls} == {"bulk_rows", "add_rows"}
    with monkeypatch.context() as patch:  # the rows built in the transaction instead
        patch.setattr(writes, "PreparedBulkStorage", type("No", (), {}))
        plain = _pipeline(tmp_path / "plain")
        plain_report = plain.add(_documents(), embed=False)
    assert _dump(ahead) == _dump(plain) == _dump(pairs)
    assert (report.added, report.chunk_ids) == (plain_report.added, plain_report.chunk_ids) \
        == (pairs_report.added, pairs_report.chunk_ids)
    for q in ("cats", "word7", "T note"):
        assert ([(h.chunk.id, h.score) for h in ahead.search(Query(q)).hits]
                == [(h.chunk.id, h.score) for h in plain.search(Query(q)).hits])
    ahead.close()
    pairs.close()
    plain.close()


def test_a_reingest_stops_building_rows_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writes, "DOCS_PER_TRANSACTION", 16)
    pipeline = _pipeline(tmp_path / "store")
    docs = _documents()
    pipeline.add(docs[:30], embed=False)
    calls: list[tuple[str, str]] = []
    for name in ("bulk_text_rows", "add_text_rows", "add_documents"):
        _spy(monkeypatch, pipeline.arms.storage, name, calls)
    changed = [*docs[:29], Document("now about birds", id=docs[29].id), *docs[30:]]
    report = pipeline.add(changed, embed=False)
    assert report.unchanged == [d.id for d in docs[:29]]
    assert report.replaced == [docs[29].id]
    assert report.added == [d.id for d in docs[30:]]
    # batches 1 and 2 hold stored ids, so rows built for them are not used; batch 3 is
    # prepared after 1 was written, while 2 is: without rows (its new documents through
    # add_documents); a batch holding none (3) turns rows back on (5's, maybe 4's)
    names = [n for n, _ in calls if n != "add_documents"]
    assert 2 <= names.count("bulk_text_rows") <= 4
    assert 1 <= names.count("add_text_rows") <= 2
    assert ("add_documents", threading.current_thread().name) in calls
    assert pipeline.search(Query("birds")).hits[0].chunk.document_id == docs[29].id
    pipeline.close()


def test_rows_the_worker_cannot_build_fail_in_their_own_transaction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writes, "DOCS_PER_TRANSACTION", 16)
    pipeline = _pipeline(tmp_path / "store")
    docs = _documents()
    docs[40] = Document("cannot be stored", id="bad", metadata={"when": object()})
    before = sys.getswitchinterval()
    with pytest.raises(OctomemError, match="'bad'"):
        pipeline.add(docs, embed=False)
    assert sys.getswitchinterval() == before
    conn = pipeline.arms.storage.connection()
    assert conn.execute("SELECT count(*) FROM documents").get == 32  # batches 1 and 2
    assert conn.execute("SELECT count(*) FROM documents WHERE id = 'bad'").get == 0
    assert not any(t.name.startswith("octomem-prepare") for t in threading.enumerate())
    pipeline.close()


def test_the_switch_interval_is_lowered_while_batches_overlap_and_restored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writes, "DOCS_PER_TRANSACTION", 16)
    pipeline = _pipeline(tmp_path / "store")
    before = sys.getswitchinterval()
    seen: list[float] = []
    real = pipeline_module.write_batch

    def write(*args: object, **kwargs: object) -> None:
        seen.append(sys.getswitchinterval())
        real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pipeline_module, "write_batch", write)
    pipeline.add(_documents(), embed=False)
    # while the worker prepares the next batch (the last batch is written without it)
    assert seen == [pytest.approx(switching.INGEST_SWITCH_INTERVAL)] * 4 + [before]
    assert sys.getswitchinterval() == before
    pipeline.add([Document("one batch: no thread", id="single")], embed=False)
    assert seen[-1] == before
    pipeline.close()


def test_nested_quick_switches_restore_the_interval_once() -> None:
    before = sys.getswitchinterval()
    with switching.quick_switches(0.001):
        with switching.quick_switches(0.0005):
            assert sys.getswitchinterval() == pytest.approx(0.0005)
        assert sys.getswitchinterval() == pytest.approx(0.0005)  # the outer block runs
    assert sys.getswitchinterval() == before
    with switching.quick_switches(0.001):
        sys.setswitchinterval(0.01)  # someone else's choice, made meanwhile: kept
    assert sys.getswitchinterval() == pytest.approx(0.01)
    sys.setswitchinterval(before)
