"""Contract of the ``Storage`` Protocol, run over every registered storage."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from octomem.engine.arms import Storage
from octomem.engine.manager import load_registry
from octomem.engine.types import Chunk, Document, Filters

STORAGES = load_registry().names("storage")
pytestmark = pytest.mark.parametrize("storage_name", STORAGES)


class Boom(Exception):
    """Raised inside a transaction to force a rollback."""


def _doc(text: str, **fields: Any) -> Document:
    return Document(text=text, **fields)


def _chunks(document: Document, *texts: str) -> list[Chunk]:
    return [Chunk(document_id=document.id, ordinal=i, text=t) for i, t in enumerate(texts)]


def _add(storage: Any, document: Document, *texts: str) -> list[Chunk]:
    with storage.transaction() as tx:
        return storage.add_document(tx, document, _chunks(document, *(texts or (document.text,))))


@pytest.fixture
def storage(build_arm: Callable[..., Any], storage_name: str) -> Any:
    return build_arm("storage", storage_name)


def test_implements_protocol(storage: Any, storage_name: str) -> None:
    assert isinstance(storage, Storage)
    assert storage.name == storage_name


def test_document_round_trip(storage: Any) -> None:
    doc = _doc(
        "alpha beta", id="doc-1", title="Greek", uri="file:///g.txt", kind="NOTE",
        tags=("x", "y"), created_at=1000.5, event_time=900.25, metadata={"conv": "c1", "n": 3},
    )
    stored = _add(storage, doc, "alpha", "beta")
    assert storage.get_document("doc-1") == doc
    assert storage.get_document("nope") is None
    assert [c.text for c in stored] == ["alpha", "beta"]
    assert [c.ordinal for c in stored] == [0, 1]
    assert all(c.id > 0 for c in stored) and stored[0].id != stored[1].id
    for chunk in stored:  # filterable fields are copied from the document
        assert (chunk.document_id, chunk.kind, chunk.tags) == ("doc-1", "NOTE", ("x", "y"))
        assert chunk.created_at == 1000.5 and dict(chunk.metadata) == {"conv": "c1", "n": 3}
    assert storage.counts() == {"documents": 1, "chunks": 2}


def test_get_chunks_keeps_order_and_skips_unknown(storage: Any) -> None:
    a, b = _add(storage, _doc("one two"), "one", "two")
    got = storage.get_chunks([b.id, 999_999, a.id])
    assert got == [b, a]
    assert storage.get_chunks([]) == []


def test_delete_document_returns_chunk_ids(storage: Any) -> None:
    doc = _doc("to delete")
    stored = _add(storage, doc, "p1", "p2", "p3")
    keep = _add(storage, _doc("keep me"))
    with storage.transaction() as tx:
        removed = storage.delete_document(tx, doc.id)
    assert sorted(removed) == sorted(c.id for c in stored)
    assert storage.get_document(doc.id) is None
    assert storage.get_chunks([c.id for c in stored]) == []
    assert storage.counts() == {"documents": 1, "chunks": 1}
    assert storage.get_chunks([keep[0].id]) == keep
    with storage.transaction() as tx:
        assert storage.delete_document(tx, "never-existed") == []


def test_find_documents_is_exact_and_oldest_first(storage: Any) -> None:
    newer = _doc("same words", created_at=200.0)
    older = _doc("same words", created_at=100.0)
    _add(storage, newer)
    _add(storage, older)
    _add(storage, _doc("same words and more", created_at=50.0))
    assert [d.id for d in storage.find_documents("same words")] == [older.id, newer.id]
    assert storage.find_documents("same") == []


def test_exception_in_transaction_rolls_back(storage: Any) -> None:
    doc = _doc("never stored")
    with pytest.raises(Boom), storage.transaction() as tx:
        storage.add_document(tx, doc, _chunks(doc, "never stored"))
        storage.set_meta(tx, "contract.key", "value")
        raise Boom
    assert storage.get_document(doc.id) is None
    assert storage.find_documents("never stored") == []
    assert storage.get_meta("contract.key") is None
    assert storage.counts() == {"documents": 0, "chunks": 0}
    assert list(storage.iter_chunks()) == []


def test_meta_round_trip(storage: Any) -> None:
    assert storage.get_meta("contract.missing") is None
    with storage.transaction() as tx:
        storage.set_meta(tx, "contract.key", "one")
    with storage.transaction() as tx:
        storage.set_meta(tx, "contract.key", "two")
    assert storage.get_meta("contract.key") == "two"


def _filter_corpus(storage: Any) -> list[Chunk]:
    specs = [
        ("ITEM", ("red",), 100.0, {"conv": "c1", "n": 1, "flag": True}),
        ("NOTE", ("red", "blue"), 200.0, {"conv": "c1", "n": 2, "flag": False}),
        ("NOTE", ("blue",), 300.0, {"conv": "c2", "n": 2}),
        ("FACT", (), 400.0, {"conv": "c2", "x.y": "dotted"}),
        ("ITEM", ("red", "blue", "green"), 500.0, {}),
    ]
    chunks: list[Chunk] = []
    for i, (kind, tags, created, meta) in enumerate(specs):
        doc = _doc(f"doc {i}", kind=kind, tags=tags, created_at=created, metadata=meta)
        chunks += _add(storage, doc, f"doc {i} a", f"doc {i} b")
    return chunks


FILTERS = [
    Filters(),
    Filters(kinds=("NOTE",)),
    Filters(kinds=("NOTE", "FACT")),
    Filters(kinds=("MISSING",)),
    Filters(tags=("red",)),
    Filters(tags=("red", "blue")),
    Filters(tags=("red", "blue", "green")),
    Filters(tags=("nope",)),
    Filters(created_after=200.0),
    Filters(created_before=200.0),
    Filters(created_after=200.0, created_before=400.0),
    Filters(metadata={"conv": "c1"}),
    Filters(metadata={"conv": "c2", "n": "2"}),
    Filters(metadata={"flag": "True"}),
    Filters(metadata={"x.y": "dotted"}),
    Filters(kinds=("NOTE", "ITEM"), tags=("blue",), created_after=150.0, metadata={"conv": "c1"}),
]


@pytest.mark.parametrize("filters", FILTERS, ids=repr)
def test_iter_chunks_applies_filters_like_filters_matches(storage: Any, filters: Filters) -> None:
    corpus = _filter_corpus(storage)
    expected = [c.id for c in corpus if filters.matches(c)]
    got = list(storage.iter_chunks(filters))
    assert [c.id for c in got] == expected
    assert [c.id for c in got] == sorted(c.id for c in got)


def test_iter_chunks_without_filters_yields_all_in_id_order(storage: Any) -> None:
    stored = [c for i in range(30) for c in _add(storage, _doc(f"bulk {i}"), f"a{i}", f"b{i}")]
    assert [c.id for c in storage.iter_chunks()] == sorted(c.id for c in stored)
    assert list(storage.iter_chunks(None)) == sorted(stored, key=lambda c: c.id)


def test_size_bytes_and_reopen(
    build_arm: Callable[..., Any], storage_name: str, tmp_path: Path
) -> None:
    root = tmp_path / "reopen"
    first = build_arm("storage", storage_name, root=root)
    doc = _doc("persisted text", tags=("t",))
    stored = _add(first, doc)
    assert isinstance(first.size_bytes(), int) and first.size_bytes() >= 0
    first.close()
    second = build_arm("storage", storage_name, root=root)
    assert second.get_document(doc.id) == doc
    assert second.get_chunks([stored[0].id]) == stored


def test_two_threads_read_and_write_one_storage(storage: Any) -> None:
    barrier = threading.Barrier(2)

    def worker(label: str) -> int:
        barrier.wait(timeout=10)  # both threads write at the same time
        for i in range(25):
            doc = _doc(f"{label} {i}", id=f"{label}-{i}", kind=label)
            _add(storage, doc)
            assert storage.get_document(doc.id) == doc
        return len(list(storage.iter_chunks(Filters(kinds=(label,)))))

    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {label: pool.submit(worker, label) for label in ("LEFT", "RIGHT")}
        seen = {label: future.result(timeout=60) for label, future in futures.items()}
    assert seen == {"LEFT": 25, "RIGHT": 25}
    assert storage.counts() == {"documents": 50, "chunks": 50}
