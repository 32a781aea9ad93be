"""Contract of the :class:`~octomem.engine.arms.Storage` Protocol, and of the optional
:class:`~octomem.engine.arms.VersionedStorage` methods (history, revisions, recall
counters, forget log)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from ..arms import Storage, VersionedStorage
from ..types import Chunk, Document, Filters, ForgetRecord
from .base import ArmBuilder, ArmContract


class Boom(Exception):
    """Raised inside a transaction to force a rollback."""


def chunks_of(document: Document, *texts: str) -> list[Chunk]:
    """Unstored chunks of ``document``, one per text (the document's text when none)."""
    return [Chunk(document_id=document.id, ordinal=i, text=t)
            for i, t in enumerate(texts or (document.text,))]


def add(storage: Any, document: Document, *texts: str) -> list[Chunk]:
    """Store ``document`` with one chunk per text in its own transaction; return the chunks."""
    with storage.transaction() as tx:
        return storage.add_document(tx, document, chunks_of(document, *texts))


def filter_corpus(storage: Any) -> list[Chunk]:
    """Store 5 two-chunk documents of varied kind, tags, time and metadata."""
    specs: list[tuple[str, tuple[str, ...], float, dict[str, Any]]] = [
        ("ITEM", ("red",), 100.0, {"conv": "c1", "n": 1, "flag": True}),
        ("NOTE", ("red", "blue"), 200.0, {"conv": "c1", "n": 2, "flag": False}),
        ("NOTE", ("blue",), 300.0, {"conv": "c2", "n": 2}),
        ("FACT", (), 400.0, {"conv": "c2", "x.y": "dotted"}),
        ("ITEM", ("red", "blue", "green"), 500.0, {}),
    ]
    chunks: list[Chunk] = []
    for i, (kind, tags, created, meta) in enumerate(specs):
        doc = Document(f"doc {i}", kind=kind, tags=tags, created_at=created, metadata=meta)
        chunks += add(storage, doc, f"doc {i} a", f"doc {i} b")
    return chunks


#: Filters whose SQL (or other) implementation must agree with :meth:`Filters.matches`.
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


class StorageContract(ArmContract):
    """Every storage: round trips, transactions, filters agreeing with ``Filters.matches``,
    reopening, and two threads writing at once. Name it with ``STORAGE``."""

    @pytest.fixture
    def storage(self, octomem_build: ArmBuilder, storage_name: str) -> Any:
        """A fresh storage in its own scope directory."""
        return octomem_build.build("storage", storage_name)

    def test_implements_protocol(self, storage: Any, storage_name: str) -> None:
        assert isinstance(storage, Storage)
        assert storage.name == storage_name

    def test_document_round_trip(self, storage: Any) -> None:
        doc = Document(
            "alpha beta", id="doc-1", title="Greek", uri="file:///g.txt", kind="NOTE",
            tags=("x", "y"), created_at=1000.5, event_time=900.25, metadata={"conv": "c1", "n": 3},
        )
        stored = add(storage, doc, "alpha", "beta")
        assert storage.get_document("doc-1") == doc
        assert storage.get_document("nope") is None
        assert [c.text for c in stored] == ["alpha", "beta"]
        assert [c.ordinal for c in stored] == [0, 1]
        assert all(c.id > 0 for c in stored) and stored[0].id != stored[1].id
        for chunk in stored:  # filterable fields are copied from the document
            assert (chunk.document_id, chunk.kind, chunk.tags) == ("doc-1", "NOTE", ("x", "y"))
            assert chunk.created_at == 1000.5 and dict(chunk.metadata) == {"conv": "c1", "n": 3}
        assert storage.counts() == {"documents": 1, "chunks": 2}

    def test_get_chunks_keeps_order_and_skips_unknown(self, storage: Any) -> None:
        a, b = add(storage, Document("one two"), "one", "two")
        got = storage.get_chunks([b.id, 999_999, a.id])
        assert got == [b, a]
        assert storage.get_chunks([]) == []

    def test_delete_document_returns_chunk_ids(self, storage: Any) -> None:
        doc = Document("to delete")
        stored = add(storage, doc, "p1", "p2", "p3")
        keep = add(storage, Document("keep me"))
        with storage.transaction() as tx:
            removed = storage.delete_document(tx, doc.id)
        assert sorted(removed) == sorted(c.id for c in stored)
        assert storage.get_document(doc.id) is None
        assert storage.get_chunks([c.id for c in stored]) == []
        assert storage.counts() == {"documents": 1, "chunks": 1}
        assert storage.get_chunks([keep[0].id]) == keep
        with storage.transaction() as tx:
            assert storage.delete_document(tx, "never-existed") == []

    def test_find_documents_is_exact_and_oldest_first(self, storage: Any) -> None:
        newer = Document("same words", created_at=200.0)
        older = Document("same words", created_at=100.0)
        add(storage, newer)
        add(storage, older)
        add(storage, Document("same words and more", created_at=50.0))
        assert [d.id for d in storage.find_documents("same words")] == [older.id, newer.id]
        assert storage.find_documents("same") == []

    def test_exception_in_transaction_rolls_back(self, storage: Any) -> None:
        doc = Document("never stored")
        with pytest.raises(Boom), storage.transaction() as tx:
            storage.add_document(tx, doc, chunks_of(doc, "never stored"))
            storage.set_meta(tx, "contract.key", "value")
            raise Boom
        assert storage.get_document(doc.id) is None
        assert storage.find_documents("never stored") == []
        assert storage.get_meta("contract.key") is None
        assert storage.counts() == {"documents": 0, "chunks": 0}
        assert list(storage.iter_chunks()) == []

    def test_meta_round_trip(self, storage: Any) -> None:
        assert storage.get_meta("contract.missing") is None
        with storage.transaction() as tx:
            storage.set_meta(tx, "contract.key", "one")
        with storage.transaction() as tx:
            storage.set_meta(tx, "contract.key", "two")
        assert storage.get_meta("contract.key") == "two"

    @pytest.mark.parametrize("filters", FILTERS, ids=repr)
    def test_iter_chunks_applies_filters_like_filters_matches(
        self, storage: Any, filters: Filters
    ) -> None:
        corpus = filter_corpus(storage)
        expected = [c.id for c in corpus if filters.matches(c)]
        got = list(storage.iter_chunks(filters))
        assert [c.id for c in got] == expected
        assert [c.id for c in got] == sorted(c.id for c in got)

    def test_iter_chunks_without_filters_yields_all_in_id_order(self, storage: Any) -> None:
        stored = [c for i in range(30)
                  for c in add(storage, Document(f"bulk {i}"), f"a{i}", f"b{i}")]
        assert [c.id for c in storage.iter_chunks()] == sorted(c.id for c in stored)
        assert list(storage.iter_chunks(None)) == sorted(stored, key=lambda c: c.id)

    def test_size_bytes_and_reopen(
        self, octomem_build: ArmBuilder, storage_name: str, tmp_path: Path
    ) -> None:
        root = tmp_path / "reopen"
        first = octomem_build.build("storage", storage_name, root=root)
        doc = Document("persisted text", tags=("t",))
        stored = add(first, doc)
        assert isinstance(first.size_bytes(), int) and first.size_bytes() >= 0
        first.close()
        second = octomem_build.build("storage", storage_name, root=root)
        assert second.get_document(doc.id) == doc
        assert second.get_chunks([stored[0].id]) == stored

    def test_two_threads_read_and_write_one_storage(self, storage: Any) -> None:
        barrier = threading.Barrier(2)

        def worker(label: str) -> int:
            barrier.wait(timeout=10)  # both threads write at the same time
            for i in range(25):
                doc = Document(f"{label} {i}", id=f"{label}-{i}", kind=label)
                add(storage, doc)
                assert storage.get_document(doc.id) == doc
            return len(list(storage.iter_chunks(Filters(kinds=(label,)))))

        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = {label: pool.submit(worker, label) for label in ("LEFT", "RIGHT")}
            seen = {label: future.result(timeout=60) for label, future in futures.items()}
        assert seen == {"LEFT": 25, "RIGHT": 25}
        assert storage.counts() == {"documents": 50, "chunks": 50}


class HistoryContract(ArmContract):
    """The optional :class:`VersionedStorage` methods; skipped for a storage without them.
    Name the storage with ``STORAGE``."""

    @pytest.fixture
    def versioned_storage(self, octomem_build: ArmBuilder, storage_name: str) -> Any:
        """A fresh storage that keeps history (the test is skipped otherwise)."""
        built = octomem_build.build("storage", storage_name)
        if not isinstance(built, VersionedStorage):
            pytest.skip(f"storage {storage_name!r} keeps no statement history")
        return built

    def test_chunks_carry_validity_from_the_document(self, versioned_storage: Any) -> None:
        storage = versioned_storage
        (by_time,) = add(storage, Document("a", created_at=100.0))
        (by_event,) = add(storage, Document("b", created_at=100.0, event_time=40.0))
        assert (by_time.valid_from, by_time.valid_to, by_time.revision) == (100.0, None, 1)
        assert by_event.valid_from == 40.0
        assert storage.get_chunks([by_event.id]) == [by_event]

    def test_supersede_keeps_the_statement_with_a_link_and_an_end(
        self, versioned_storage: Any
    ) -> None:
        storage = versioned_storage
        old = Document("Python 3.11", id="old", created_at=100.0, event_time=50.0)
        (chunk,) = add(storage, old)
        new = Document("Python 3.12", id="new", created_at=300.0, supersedes="old")
        (current,) = add(storage, new)
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

    def test_hand_on_before_a_forget(self, versioned_storage: Any) -> None:
        """What a forgotten statement superseded: current again, or its successor's."""
        storage = versioned_storage
        (a,) = add(storage, Document("v1", id="a", created_at=100.0))
        add(storage, Document("v2", id="b", created_at=200.0, supersedes="a"))
        add(storage, Document("v3", id="c", created_at=300.0, supersedes="b"))
        with storage.transaction() as tx:
            storage.supersede(tx, "a", "b", 200.0)
            storage.supersede(tx, "b", "c", 300.0)
        with storage.transaction() as tx:  # b (superseded) goes: a is c's now
            assert storage.hand_on(tx, "b", "c") == ["a"]
            storage.delete_document(tx, "b")
        old, new = storage.get_document("a"), storage.get_document("c")  # a: until c began
        assert (old.superseded_by, old.valid_to, new.supersedes) == ("c", 300.0, "a")
        assert [c.valid_to for c in storage.get_chunks([a.id])] == [300.0]
        with storage.transaction() as tx:  # c (current) goes: a is current again
            assert storage.hand_on(tx, "c", None) == ["a"]
            storage.delete_document(tx, "c")
            assert storage.hand_on(tx, "nothing", None) == []
        old = storage.get_document("a")
        assert (old.superseded_by, old.valid_to, old.is_current) == (None, None, True)
        assert storage.get_chunks([a.id])[0].valid_to is None
        assert [c.id for c in storage.iter_chunks(Filters())] == [a.id]
        assert storage.noncurrent_chunk_ids() == []

    def test_supersede_never_ends_before_the_start(self, versioned_storage: Any) -> None:
        storage = versioned_storage
        (chunk,) = add(storage, Document("later event", id="a", created_at=100.0, event_time=500.0))
        with storage.transaction() as tx:
            storage.supersede(tx, "a", "b", 200.0)
        assert storage.get_document("a").valid_to == 500.0
        assert storage.get_chunks([chunk.id])[0].valid_to == 500.0

    def test_revision_keeps_old_chunks_as_history(self, versioned_storage: Any) -> None:
        storage = versioned_storage
        first = Document("one two", id="doc", title="T", created_at=100.0)
        old = add(storage, first, "one", "two")
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

    def test_import_restores_history_and_usage(self, versioned_storage: Any) -> None:
        storage = versioned_storage
        doc = Document("kept as history", id="h", created_at=10.0, superseded_by="n",
                       valid_to=20.0, supersedes="p", revision=2, recalls=7,
                       last_recalled_at=15.0)
        chunks = [Chunk("h", 0, "older", revision=1, valid_from=5.0, valid_to=10.0),
                  Chunk("h", 0, "kept as history", revision=2)]
        with storage.transaction() as tx:
            stored = storage.add_document(tx, doc, chunks)
        assert storage.get_document("h") == doc
        assert [(c.revision, c.valid_from, c.valid_to) for c in stored] == [(1, 5.0, 10.0),
                                                                          (2, 10.0, 20.0)]

    def test_iter_documents_newest_first_by_kind(self, versioned_storage: Any) -> None:
        storage = versioned_storage
        for i in range(7):
            add(storage, Document(f"s{i}", id=f"s{i}", kind="HANDOFF" if i % 2 else "ITEM",
                                  created_at=float(i)))
        assert [d.id for d in storage.iter_documents()] == [f"s{i}" for i in range(6, -1, -1)]
        assert [d.id for d in storage.iter_documents(kinds=("HANDOFF",))] == ["s5", "s3", "s1"]

    def test_recall_counters(self, versioned_storage: Any) -> None:
        storage = versioned_storage
        add(storage, Document("a", id="a"))
        add(storage, Document("b", id="b"))
        with storage.transaction() as tx:
            storage.record_recalls(tx, ["a", "a", "b"], 50.0)
        with storage.transaction() as tx:
            storage.record_recalls(tx, ["a"], 60.0)
        a, b = storage.get_document("a"), storage.get_document("b")
        assert (a.recalls, a.last_recalled_at, b.recalls, b.last_recalled_at) == (2, 60.0, 1, 50.0)

    def test_forget_log_keeps_no_text(self, versioned_storage: Any) -> None:
        storage = versioned_storage
        record = ForgetRecord("x", "FACT", "ab" * 32, 1.0, 2.0, "wrong")
        with storage.transaction() as tx:
            storage.record_forgotten(tx, record)
            storage.record_forgotten(tx, ForgetRecord("y", "ITEM", "cd" * 32, 1.0, 3.0))
        assert storage.get_forgotten("x") == record and storage.get_forgotten("z") is None
        assert [r.id for r in storage.iter_forgotten()] == ["x", "y"]
