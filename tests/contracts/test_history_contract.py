"""Contract of the optional ``VersionedStorage`` methods, run over every registered storage
that implements them (statement history, revisions, recall counters, forget log)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from octomem.engine.arms import VersionedStorage
from octomem.engine.manager import load_registry
from octomem.engine.types import Chunk, Document, Filters, ForgetRecord

pytestmark = pytest.mark.parametrize("storage_name", load_registry().names("storage"))


@pytest.fixture
def storage(build_arm: Callable[..., Any], storage_name: str) -> Any:
    built = build_arm("storage", storage_name)
    if not isinstance(built, VersionedStorage):
        pytest.skip(f"storage {storage_name!r} keeps no statement history")
    return built


def _add(storage: Any, document: Document, *texts: str) -> list[Chunk]:
    chunks = [Chunk(document_id=document.id, ordinal=i, text=t)
              for i, t in enumerate(texts or (document.text,))]
    with storage.transaction() as tx:
        return storage.add_document(tx, document, chunks)


def test_chunks_carry_validity_from_the_document(storage: Any) -> None:
    (by_time,) = _add(storage, Document("a", created_at=100.0))
    (by_event,) = _add(storage, Document("b", created_at=100.0, event_time=40.0))
    assert (by_time.valid_from, by_time.valid_to, by_time.revision) == (100.0, None, 1)
    assert by_event.valid_from == 40.0
    assert storage.get_chunks([by_event.id]) == [by_event]


def test_supersede_keeps_the_statement_with_a_link_and_an_end(storage: Any) -> None:
    old = Document("Python 3.11", id="old", created_at=100.0, event_time=50.0)
    (chunk,) = _add(storage, old)
    new = Document("Python 3.12", id="new", created_at=300.0, supersedes="old")
    (current,) = _add(storage, new)
    with storage.transaction() as tx:
        changed = storage.supersede(tx, "old", "new", new.valid_from)
    assert changed == [chunk.id]
    stored = storage.get_document("old")
    assert stored.superseded_by == "new" and stored.valid_to == 300.0 and not stored.is_current
    assert storage.get_document("new").supersedes == "old"
    assert storage.get_chunks([chunk.id])[0].valid_to == 300.0
    assert storage.noncurrent_chunk_ids() == [chunk.id]
    assert [c.id for c in storage.iter_chunks(Filters())] == [current.id]
    assert chunk.id in [c.id for c in storage.iter_chunks(None)]
    assert [d.id for d in storage.iter_documents()] == ["new"]
    assert [d.id for d in storage.iter_documents(include_superseded=True)] == ["new", "old"]


def test_supersede_never_ends_before_the_start(storage: Any) -> None:
    (chunk,) = _add(storage, Document("later event", id="a", created_at=100.0, event_time=500.0))
    with storage.transaction() as tx:
        storage.supersede(tx, "a", "b", 200.0)
    assert storage.get_document("a").valid_to == 500.0
    assert storage.get_chunks([chunk.id])[0].valid_to == 500.0


def test_revision_keeps_old_chunks_as_history(storage: Any) -> None:
    first = Document("one two", id="doc", title="T", created_at=100.0)
    old = _add(storage, first, "one", "two")
    second = Document("three", id="doc", title="T2", created_at=200.0)
    with storage.transaction() as tx:
        storage.record_recalls(tx, ["doc"], 150.0)
        new, retired = storage.revise_document(tx, second, [Chunk("doc", 0, "three")])
    assert sorted(retired) == sorted(c.id for c in old)
    doc = storage.get_document("doc")
    assert (doc.text, doc.title, doc.revision) == ("three", "T2", 2)
    assert (doc.recalls, doc.valid_to) == (1, None)
    assert new[0].revision == 2 and new[0].valid_to is None and new[0].title == "T2"
    history = storage.document_chunks("doc")
    assert [(c.text, c.revision, c.valid_to) for c in history] == [
        ("one", 1, 200.0), ("two", 1, 200.0), ("three", 2, None)]
    assert [c.text for c in storage.iter_chunks(Filters())] == ["three"]
    assert [c.text for c in storage.iter_chunks(Filters(as_of=150.0))] == ["one", "two"]


def test_import_restores_history_and_usage(storage: Any) -> None:
    doc = Document("kept as history", id="h", created_at=10.0, superseded_by="n", valid_to=20.0,
                   supersedes="p", revision=2, recalls=7, last_recalled_at=15.0)
    chunks = [Chunk("h", 0, "older", revision=1, valid_from=5.0, valid_to=10.0),
              Chunk("h", 0, "kept as history", revision=2)]
    with storage.transaction() as tx:
        stored = storage.add_document(tx, doc, chunks)
    assert storage.get_document("h") == doc
    assert [(c.revision, c.valid_from, c.valid_to) for c in stored] == [(1, 5.0, 10.0),
                                                                      (2, 10.0, 20.0)]


def test_iter_documents_newest_first_by_kind(storage: Any) -> None:
    for i in range(7):
        _add(storage, Document(f"s{i}", id=f"s{i}", kind="HANDOFF" if i % 2 else "ITEM",
                               created_at=float(i)))
    assert [d.id for d in storage.iter_documents()] == [f"s{i}" for i in range(6, -1, -1)]
    assert [d.id for d in storage.iter_documents(kinds=("HANDOFF",))] == ["s5", "s3", "s1"]


def test_recall_counters(storage: Any) -> None:
    _add(storage, Document("a", id="a"))
    _add(storage, Document("b", id="b"))
    with storage.transaction() as tx:
        storage.record_recalls(tx, ["a", "a", "b"], 50.0)
    with storage.transaction() as tx:
        storage.record_recalls(tx, ["a"], 60.0)
    a, b = storage.get_document("a"), storage.get_document("b")
    assert (a.recalls, a.last_recalled_at, b.recalls, b.last_recalled_at) == (2, 60.0, 1, 50.0)


def test_forget_log_keeps_no_text(storage: Any) -> None:
    record = ForgetRecord("x", "FACT", "ab" * 32, 1.0, 2.0, "wrong")
    with storage.transaction() as tx:
        storage.record_forgotten(tx, record)
        storage.record_forgotten(tx, ForgetRecord("y", "ITEM", "cd" * 32, 1.0, 3.0))
    assert storage.get_forgotten("x") == record and storage.get_forgotten("z") is None
    assert [r.id for r in storage.iter_forgotten()] == ["x", "y"]
