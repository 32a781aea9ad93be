"""The in-RAM filter index: every shape of ``Filters`` gives ``Filters.matches``'s rows,
after any writes, by any connection."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from octomem.engine.types import Chunk, Document, Filters
from octomem.plugins.sqlite.filter_index import FilterIndex
from octomem.plugins.sqlite.storage import SqliteStorage

KINDS = ["ITEM", "NOTE", "FACT"]
TAGS = ["red", "blue", "green"]
KEYS = ["conv", "n", "flag", "x.y"]
# values whose str() differs from their JSON text, or looks like another type's
VALUES = st.sampled_from(["c1", "c2", "1", "True", "None", "1.5", "", "é"]) | st.sampled_from(
    [1, 2, 1.5, 2.0, True, False, None])
TIMES = st.sampled_from([100.0, 150.0, 200.0, 250.0, 300.0])


def _doc(draw: Any) -> Document:
    meta = draw(st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=3))
    event = draw(st.none() | TIMES)
    return Document(
        text="text", kind=draw(st.sampled_from(KINDS)),
        tags=tuple(draw(st.lists(st.sampled_from(TAGS), max_size=3, unique=True))),
        created_at=draw(TIMES), event_time=event, metadata=meta)


@st.composite
def writes(draw: Any) -> list[tuple[str, Any]]:
    """A sequence of adds, supersedes, revisions and deletes (by position among adds)."""
    ops: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(1, 12))):
        op = draw(st.sampled_from(["add", "add", "add", "supersede", "revise", "delete"]))
        ops.append((op, (_doc(draw), draw(st.integers(0, 20)), draw(TIMES))))
    return ops


@st.composite
def filters(draw: Any) -> Filters:
    """Filters setting one to three fields (more would rarely leave a row)."""
    chosen = draw(st.sets(st.sampled_from(sorted(FIELDS)), min_size=1, max_size=3))
    return Filters(**{name: draw(FIELDS[name]) for name in chosen})


FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "kinds": st.lists(st.sampled_from([*KINDS, "MISSING"]), min_size=1, max_size=2).map(tuple),
    "tags": st.lists(st.sampled_from([*TAGS, "nope"]), min_size=1, max_size=2).map(tuple),
    "created_after": TIMES, "created_before": TIMES,
    "metadata": st.dictionaries(st.sampled_from([*KEYS, "absent"]), VALUES.map(str),
                                min_size=1, max_size=2),
    "valid_after": TIMES, "valid_before": TIMES, "as_of": TIMES,
    "include_superseded": st.booleans(),
}


def _apply(storage: SqliteStorage, ops: list[tuple[str, Any]]) -> None:
    added: list[str] = []
    for op, (doc, pick, when) in ops:
        with storage.transaction() as tx:
            if op == "add" or not added:
                storage.add_document(tx, doc, [Chunk(doc.id, 0, "a"), Chunk(doc.id, 1, "b")])
                added.append(doc.id)
                continue
            target = added[pick % len(added)]
            if op == "supersede":
                storage.supersede(tx, target, "someone", when)
            elif op == "revise":
                new = Document(text="new", id=target, kind=doc.kind, tags=doc.tags,
                               created_at=doc.created_at, metadata=doc.metadata)
                storage.revise_document(tx, new, [Chunk(target, 0, "c")])
            else:
                storage.delete_document(tx, target)
                added.remove(target)


def _check(storage: SqliteStorage, index: FilterIndex, cases: list[Filters]) -> None:
    index.sync(storage.connection())
    every = list(storage.iter_chunks(Filters(include_superseded=True)))
    for f in cases:
        mask = index.mask(f)
        got = [c.id for c in every if (mask is None or (c.id < len(mask) and mask[c.id]))]
        assert got == [c.id for c in every if f.matches(c)], f
        if mask is not None:  # nothing passes that is not stored
            assert set(np.flatnonzero(mask).tolist()) <= {c.id for c in every}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=writes(), then=writes(), cases=st.lists(filters(), min_size=1, max_size=6))
def test_masks_agree_with_filters_matches_after_any_writes(
    first: list[tuple[str, Any]], then: list[tuple[str, Any]], cases: list[Filters]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        storage = SqliteStorage(Path(tmp) / "db.sqlite3")
        _apply(storage, first)
        index = FilterIndex()
        _check(storage, index, cases)  # loaded whole
        _apply(storage, then)
        _check(storage, index, cases)  # kept in step through the change log
        fresh = FilterIndex()
        _check(storage, fresh, cases)  # and equal to a fresh load
        storage.close()


def test_writes_of_another_connection_are_seen(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    reader, writer = SqliteStorage(path), SqliteStorage(path)
    index = FilterIndex()
    index.sync(reader.connection())
    doc = Document("x", kind="NOTE", metadata={"conv": "c9"})
    with writer.transaction() as tx:
        (chunk,) = writer.add_document(tx, doc, [Chunk(doc.id, 0, "x")])
    index.sync(reader.connection())
    mask = index.mask(Filters(metadata={"conv": "c9"}))
    assert mask is not None and np.flatnonzero(mask).tolist() == [chunk.id]
    with writer.transaction() as tx:
        writer.supersede(tx, doc.id, "later", 5.0)
    index.sync(reader.connection())
    assert not index.mask(Filters(metadata={"conv": "c9"})).any()
    assert index.mask(Filters(include_superseded=True)) is None


TRICKY = [Filters(metadata={"conv": "None"}), Filters(metadata={"absent": "None"}),
          Filters(metadata={"flag": "True"}), Filters(metadata={"n": "2.0"}),
          Filters(metadata={"n": "2"}), Filters(metadata={"x.y": ""}),
          Filters(tags=("red", "blue")), Filters(kinds=("NOTE", "MISSING")),
          Filters(as_of=200.0), Filters(valid_after=150.0, valid_before=250.0)]


def test_values_rendered_as_str_of_the_stored_value(tmp_path: Path) -> None:
    """``str(metadata.get(key))``: an absent key is 'None', JSON true is 'True', 2.0 is
    '2.0' (not '2'), as :meth:`Filters.matches` renders them."""
    storage = SqliteStorage(tmp_path / "db.sqlite3")
    specs = [({"conv": None}, ("red",)), ({}, ("red", "blue")), ({"flag": True, "n": 2.0}, ()),
             ({"n": 2, "x.y": ""}, ("blue",)), ({"conv": "c1"}, ("blue", "red", "green"))]
    with storage.transaction() as tx:
        for i, (meta, tags) in enumerate(specs):
            doc = Document(f"d{i}", kind=KINDS[i % 3], tags=tags, metadata=meta,
                           created_at=100.0 + 50 * i)
            storage.add_document(tx, doc, [Chunk(doc.id, 0, "t")])
    with storage.transaction() as tx:
        storage.supersede(tx, doc.id, "later", 220.0)
    _check(storage, FilterIndex(), TRICKY)
    index = FilterIndex()
    index.sync(storage.connection())
    assert np.flatnonzero(index.mask(Filters(metadata={"conv": "None"}))).tolist() == [1, 2, 3, 4]


def test_bulk_inserts_are_logged_once_and_an_older_insert_trigger_is_dropped(
    tmp_path: Path,
) -> None:
    """New chunk rows are logged by the storage's inserts, a batch by one statement; the
    per-row insert trigger a store of before December 4 holds is dropped when it opens."""
    path = tmp_path / "db.sqlite3"
    first = SqliteStorage(path)
    with first.transaction() as tx:  # as an older octomem's schema left it
        tx.execute("CREATE TRIGGER chunks_log_insert AFTER INSERT ON chunks BEGIN "
                   "INSERT INTO vector_log (table_name, chunk_id) VALUES ('chunks', NEW.id); END")
    first.close()
    reader, writer = SqliteStorage(path), SqliteStorage(path)
    triggers = {r[0] for r in reader.connection().execute(
        "SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert triggers == {"chunks_log_update", "chunks_log_delete", "documents_unpurged"}
    index = FilterIndex()
    index.sync(reader.connection())
    docs = [Document(f"text {i}", id=f"d{i}", kind="NOTE" if i % 2 else "FACT",
                     metadata={"conv": f"c{i % 3}"}) for i in range(7)]
    with writer.transaction() as tx:
        stored = writer.add_documents(tx, [(d, [Chunk(d.id, 0, d.text), Chunk(d.id, 1, "more")])
                                           for d in docs])
    with writer.transaction() as tx:
        (single,) = writer.add_document(tx, Document("one", id="s", kind="NOTE"),
                                        [Chunk("s", 0, "one")])
    ids = [c.id for chunks in stored for c in chunks] + [single.id]
    logged = [r[0] for r in reader.connection().execute(
        "SELECT chunk_id FROM vector_log WHERE table_name = 'chunks' ORDER BY seq")]
    assert logged == ids  # each new row once, in insert order
    index.sync(reader.connection())
    mask = index.mask(Filters(metadata={"conv": "c1"}))
    assert mask is not None
    assert np.flatnonzero(mask).tolist() == [c.id for d, chunks in zip(docs, stored, strict=True)
                                             if d.metadata["conv"] == "c1" for c in chunks]
    assert np.flatnonzero(index.mask(Filters(kinds=("NOTE",)))).tolist() == [
        c.id for d, chunks in zip(docs, stored, strict=True) if d.kind == "NOTE"
        for c in chunks] + [single.id]
