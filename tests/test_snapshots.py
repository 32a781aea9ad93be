"""Snapshots of the in-RAM copies beside the SQLite file: written after a whole load,
restored by the next process (not rebuilt), followed through the change log, and never
trusted when they do not match the store; answers with and without them are the same."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from octomem.engine.types import Chunk, Document, Filters
from octomem.plugins.fts5.arm import Fts5KeywordArm, Fts5Options
from octomem.plugins.sqlite import snapshot_checksums, snapshots
from octomem.plugins.sqlite.storage import SqliteStorage
from octomem.plugins.sqlite_vec.arm import SqliteVecOptions, SqliteVecSemanticArm

DIM = 8
KINDS = ("memory", "knowledge", "note")
WORDS = ("heron", "river", "stone", "lantern", "copper", "meadow", "harbour", "violet")


def _build(path: Path, n: int = 80, seed: int = 0) -> list[int]:
    """Store ``n`` one-chunk documents (mixed kinds, tags, metadata, times, texts) with
    random vectors, through the arms (so the change log has their rows)."""
    rng = np.random.default_rng(seed)
    storage = SqliteStorage(path, snapshots=False)
    keyword = Fts5KeywordArm(storage)
    semantic = SqliteVecSemanticArm(storage, SqliteVecOptions(scan="vec0"))
    ids: list[int] = []
    with storage.transaction() as tx:
        semantic.bind(tx, "model", DIM)
        for i in range(n):
            text = " ".join(rng.choice(WORDS, size=int(rng.integers(2, 7))))
            doc = Document(text=text, kind=KINDS[i % 3], tags=["even"] if i % 2 == 0 else [],
                           metadata={"group": i % 4}, created_at=1000.0 + i)
            chunks = storage.add_document(tx, doc, [Chunk(document_id=doc.id, ordinal=0,
                                                          text=text)])
            keyword.index(tx, chunks)
            ids.append(chunks[0].id)
        semantic.add(tx, ids, rng.standard_normal((n, DIM)).astype(np.float32))
        tx.execute("UPDATE chunks SET valid_to = 1030 WHERE id % 7 = 0")  # superseded ones
    storage.close()
    return ids


class Process:
    """What one process holds: a storage and both arms (defaults: warm scan/in_ram)."""

    def __init__(self, path: Path, use_snapshots: bool = True, loaded: bool = False) -> None:
        self.storage = SqliteStorage(path, snapshots=use_snapshots)
        mode = "always" if loaded else "warm"
        self.keyword = Fts5KeywordArm(self.storage, Fts5Options(in_ram=mode))
        self.semantic = SqliteVecSemanticArm(
            self.storage, SqliteVecOptions(scan="numpy" if loaded else "warm"))
        with self.storage.transaction() as tx:
            self.semantic.bind(tx, "model", DIM)

    def warm(self) -> None:
        """Load (or restore) every copy and wait for the snapshots being written."""
        self.keyword.warm()
        self.semantic.warm()
        for state in self.states().values():
            if state.saving is not None:
                state.saving.join()

    def states(self) -> dict[str, object]:
        matrix = self.semantic._matrices[self.semantic.bound.table]  # type: ignore[union-attr]
        return {"vectors": matrix.snapshot, "postings": self.keyword.postings.snapshot,
                "filters": self.storage.fields.snapshot}

    def answers(self, query: np.ndarray, text: str, filters: Filters, k: int = 10) -> tuple:
        vec = [(h.chunk_id, round(h.score, 5)) for h in self.semantic.search(query, filters, k)]
        kw = [(h.chunk_id, round(h.score, 9)) for h in self.keyword.search(text, filters, k)]
        return vec, kw

    def close(self) -> None:
        self.storage.close()


def _counts(process: Process) -> dict[str, tuple[int, int]]:
    return {name: (s.restores, s.loads) for name, s in process.states().items()}  # type: ignore[attr-defined]


QUERY = np.random.default_rng(99).standard_normal(DIM).astype(np.float32)
CASES = [Filters(), Filters(kinds=("note",)), Filters(tags=("even",)),
         Filters(metadata={"group": 2}), Filters(as_of=1020.0), Filters(include_superseded=True)]


def _reference(path: Path) -> list[tuple]:
    """Answers computed from the tables alone (no snapshot is read or written)."""
    ref = Process(path, use_snapshots=False, loaded=True)
    try:
        return [ref.answers(QUERY, "heron river copper", f) for f in CASES]
    finally:
        ref.close()


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    """A store whose copies a first process loaded whole and saved as snapshots."""
    path = tmp_path / "octomem.sqlite3"
    _build(path)
    first = Process(path)
    first.warm()
    assert _counts(first) == {"vectors": (0, 1), "postings": (0, 1), "filters": (0, 1)}
    first.close()
    return path


def test_snapshots_are_written_then_restored_not_rebuilt(saved: Path) -> None:
    folder = snapshots.folder(saved)
    pointers = sorted(p.name for p in folder.glob("*.json"))
    assert len(pointers) == 3 and "chunks.json" in pointers
    assert all((folder / json.loads((folder / p).read_text())["folder"] / "meta.json").is_file()
               for p in pointers)
    second = Process(saved)  # a fresh process that never warms: a one-shot CLI search
    try:
        got = [second.answers(QUERY, "heron river copper", f) for f in CASES]
        assert _counts(second) == {"vectors": (1, 0), "postings": (1, 0), "filters": (1, 0)}
        assert all(s.origin == "snapshot" for s in second.states().values())  # type: ignore[attr-defined]
        matrix = second.semantic._matrices[second.semantic.bound.table]  # type: ignore[union-attr]
        # still the map (nothing copied), but a plain ndarray: np.memmap runs Python code
        # on every index and derived array
        assert type(matrix.matrix) is np.ndarray and isinstance(matrix.matrix.base, np.memmap)
    finally:
        second.close()
    assert got == _reference(saved)
    assert any(vec for vec, _ in got) and any(kw for _, kw in got)


WRITER = """
import sys
import numpy as np
from octomem.engine.types import Chunk, Document
from octomem.plugins.fts5.arm import Fts5KeywordArm
from octomem.plugins.sqlite.storage import SqliteStorage
from octomem.plugins.sqlite_vec.arm import SqliteVecOptions, SqliteVecSemanticArm

storage = SqliteStorage(sys.argv[1], snapshots=False)
keyword = Fts5KeywordArm(storage)
semantic = SqliteVecSemanticArm(storage, SqliteVecOptions(scan="vec0"))
with storage.transaction() as tx:
    semantic.bind(tx, "model", 8)
    doc = Document(text="heron heron heron lantern", kind="note", metadata={"group": 2})
    chunks = storage.add_document(tx, doc, [Chunk(document_id=doc.id, ordinal=0, text=doc.text)])
    keyword.index(tx, chunks)
    semantic.add(tx, [chunks[0].id], np.ones((1, 8), dtype=np.float32))
    if sys.argv[2] != "-":
        gone = storage.get_chunks([int(sys.argv[2])])[0].document_id
        removed = storage.delete_document(tx, gone)
        keyword.remove(tx, removed)
        semantic.remove(tx, removed)
print(chunks[0].id)
"""


def test_a_write_from_another_process_is_followed_from_the_snapshot(saved: Path) -> None:
    """The snapshot is older than the file: the next process restores it and follows the
    change log (the other process's new chunk is found)."""
    done = subprocess.run([sys.executable, "-c", WRITER, str(saved), "-"], check=True,
                          capture_output=True, text=True, timeout=120)
    new = int(done.stdout.strip())
    later = Process(saved)
    try:
        got = [later.answers(QUERY, "heron river copper", f) for f in CASES]
        assert _counts(later) == {"vectors": (1, 0), "postings": (1, 0), "filters": (1, 0)}
        vec, kw = later.answers(np.ones(DIM, dtype=np.float32), "heron", Filters(), 80)
    finally:
        later.close()
    assert got == _reference(saved)
    assert vec[0][0] == new and new in [c for c, _ in kw]


def test_a_deletion_from_another_process_removes_the_snapshots(saved: Path) -> None:
    """Snapshots hold the deleted chunk's words and vector (plugins/sqlite/purge.py): the
    deleting process removes them after its commit; the next process answers from the
    tables (the new chunk found, the deleted one not) and loads its copies whole."""
    done = subprocess.run([sys.executable, "-c", WRITER, str(saved), "5"], check=True,
                          capture_output=True, text=True, timeout=120)
    new = int(done.stdout.strip())
    assert not list(snapshots.folder(saved).iterdir())
    later = Process(saved)
    try:
        got = [later.answers(QUERY, "heron river copper", f) for f in CASES]
        assert _counts(later) == {"vectors": (0, 0), "postings": (0, 0), "filters": (0, 0)}
        vec, kw = later.answers(np.ones(DIM, dtype=np.float32), "heron", Filters(), 80)
        later.warm()
        assert _counts(later) == {"vectors": (0, 1), "postings": (0, 1), "filters": (0, 1)}
    finally:
        later.close()
    assert got == _reference(saved)
    assert vec[0][0] == new and new in [c for c, _ in kw]
    assert 5 not in [c for c, _ in vec] + [c for c, _ in kw]


def _rejected(path: Path, caplog: pytest.LogCaptureFixture, says: str) -> None:
    """A fresh process ignores the snapshots (logging ``says``), answers exactly, and
    loads the copies from the tables when warmed."""
    with caplog.at_level(logging.INFO, logger="octomem"):
        fresh = Process(path)
        try:
            got = [fresh.answers(QUERY, "heron river copper", f) for f in CASES]
            assert not any(s.restores for s in fresh.states().values())  # type: ignore[attr-defined]
            fresh.warm()
            assert _counts(fresh) == {"vectors": (0, 1), "postings": (0, 1), "filters": (0, 1)}
        finally:
            fresh.close()
    assert got == _reference(path)
    assert says in caplog.text


def test_a_snapshot_of_another_store_identity_is_ignored(
        saved: Path, caplog: pytest.LogCaptureFixture) -> None:
    storage = SqliteStorage(saved, snapshots=False)
    with storage.transaction() as tx:
        tx.execute("UPDATE meta SET value = 'another' WHERE key = ?", (snapshots.IDENTITY_KEY,))
    storage.close()
    _rejected(saved, caplog, "of another store")


def test_a_log_that_no_longer_holds_the_position_is_not_followed(
        saved: Path, caplog: pytest.LogCaptureFixture) -> None:
    """E.g. a file restored from a backup, or a log pruned past the snapshot."""
    storage = SqliteStorage(saved, snapshots=False)
    with storage.transaction() as tx:
        tx.execute("DELETE FROM vector_log WHERE seq = (SELECT max(seq) FROM vector_log)")
    storage.close()
    _rejected(saved, caplog, "no longer holds its position")


def _add_one(path: Path, text: str, seed: int) -> None:
    """Store one more document through the arms (its chunk, postings and vector)."""
    storage = SqliteStorage(path, snapshots=False)
    keyword = Fts5KeywordArm(storage)
    semantic = SqliteVecSemanticArm(storage, SqliteVecOptions(scan="vec0"))
    with storage.transaction() as tx:
        semantic.bind(tx, "model", DIM)
        doc = Document(text=text, kind="note", metadata={"group": 1}, created_at=2000.0)
        chunks = storage.add_document(tx, doc, [Chunk(document_id=doc.id, ordinal=0, text=text)])
        keyword.index(tx, chunks)
        semantic.add(tx, [chunks[0].id],
                      np.random.default_rng(seed).standard_normal((1, DIM)).astype(np.float32))
    storage.close()


def test_a_restored_backup_written_again_does_not_take_the_later_snapshots(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Trial 20 L2: a backup restored over the store, then one write of the same shape as
    the write it lost, brings the log back to the snapshots' position with the same
    ``(table, chunk id)`` rows there; the snapshots of the lost state are not taken."""
    path = tmp_path / "octomem.sqlite3"
    _build(path)
    backup = tmp_path / "backup.sqlite3"
    backup.write_bytes(path.read_bytes())  # closed: no -wal beside it
    _add_one(path, "zebra crossings repainted every april", seed=1)
    first = Process(path)
    first.warm()  # snapshots of the state holding the zebra note
    first.close()
    path.write_bytes(backup.read_bytes())  # restored, as docs/mcp.md says (stopped, no -wal)
    _add_one(path, "vending machine takes only coins", seed=2)
    _rejected(path, caplog, "no longer holds its position")


@pytest.mark.parametrize("damage", ["truncate", "garbage", "meta", "empty"])
def test_a_truncated_or_corrupt_snapshot_is_a_warning_and_exact_answers(
        saved: Path, caplog: pytest.LogCaptureFixture, damage: str) -> None:
    folder = snapshots.folder(saved)
    for pointer in folder.glob("*.json"):
        where = folder / json.loads(pointer.read_text())["folder"]
        if damage == "meta":
            (where / "meta.json").write_text("{not json")
            continue
        for array in where.glob("*.npy"):
            data = array.read_bytes()
            array.write_bytes(data[:len(data) // 2] if damage == "truncate" else b""
                              if damage == "empty" else b"\x93NUMPY" + data[50:])
    _rejected(saved, caplog, "unreadable")


def _flip(saved: Path) -> None:
    """Damage every array file of every snapshot without changing its size (a bad sector,
    an interrupted copy): bytes in the middle of its data inverted."""
    folder = snapshots.folder(saved)
    for pointer in folder.glob("*.json"):
        for array in (folder / json.loads(pointer.read_text())["folder"]).glob("*.npy"):
            data = bytearray(array.read_bytes())
            middle = 128 + (len(data) - 128) // 2
            data[middle:middle + 8] = bytes(b ^ 0xFF for b in data[middle:middle + 8])
            array.write_bytes(bytes(data))


def test_same_size_damage_is_caught_by_the_checksums(
        saved: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Trial 20 L5: flipped bytes parse as the same shapes and types."""
    _flip(saved)
    _rejected(saved, caplog, "does not match its checksum")


def test_damage_of_a_large_file_is_caught_while_the_copy_is_in_use(
        saved: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file over ``CHECK_NOW_BYTES`` (here every file) is checked in a thread after the
    copy restored it: the damage found removes the snapshot, and the copy is loaded from
    the tables at its next search."""
    monkeypatch.setattr(snapshot_checksums, "CHECK_NOW_BYTES", 0)
    _flip(saved)
    fresh = Process(saved)
    try:
        with caplog.at_level(logging.WARNING, logger="octomem"):
            for f in CASES:  # restored (the filter index by a filtered search), then checked
                fresh.answers(QUERY, "heron river copper", f)
            deadline = time.monotonic() + 60  # the checks' threads (slow on a loaded CI)
            while time.monotonic() < deadline:
                if caplog.text.count("does not match its checksum") == 3:
                    break
                time.sleep(0.01)
            got = [fresh.answers(QUERY, "heron river copper", f) for f in CASES]
            # loaded from the tables (twice when the damage also failed the check after
            # following the log, before the thread found it)
            assert all(s.loads >= 1 for s in fresh.states().values()), _counts(fresh)
    finally:
        fresh.close()
    assert got == _reference(saved)
    assert caplog.text.count("does not match its checksum") == 3


def test_a_change_that_bypassed_the_log_is_caught_by_the_check(
        saved: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A vector deleted without a log row (e.g. by hand): the snapshot's row count no
    longer agrees with the table after following the log, so the copy is loaded whole."""
    storage = SqliteStorage(saved, snapshots=False)
    table = SqliteVecSemanticArm(storage).vector_sets()[0].table
    with storage.transaction() as tx:
        tx.execute(f"DELETE FROM {table} WHERE chunk_id = 3")
    storage.close()
    with caplog.at_level(logging.INFO, logger="octomem"):
        fresh = Process(saved)
        try:
            fresh.warm()
            counts = _counts(fresh)
            vec, _ = fresh.answers(QUERY, "heron", Filters(include_superseded=True), 80)
        finally:
            fresh.close()
    assert counts["vectors"] == (0, 1) and counts["postings"] == (1, 0)
    assert "disagrees with the tables" in caplog.text
    assert 3 not in [c for c, _ in vec] and len(vec) == 79


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kinds=st.lists(st.sampled_from(KINDS), max_size=2).map(tuple),
       tags=st.lists(st.just("even"), max_size=1).map(tuple),
       group=st.none() | st.integers(0, 4), after=st.none() | st.floats(990, 1090),
       as_of=st.none() | st.floats(990, 1090), superseded=st.booleans(),
       words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
       seed=st.integers(0, 50), k=st.integers(1, 40))
def test_answers_with_and_without_snapshots_are_identical(
        tmp_path_factory: pytest.TempPathFactory, kinds: tuple[str, ...],
        tags: tuple[str, ...], group: int | None, after: float | None, as_of: float | None,
        superseded: bool, words: list[str], seed: int, k: int) -> None:
    path = _saved_once(tmp_path_factory)
    filters = Filters(kinds=kinds, tags=tags, created_after=after, as_of=as_of,
                      include_superseded=superseded,
                      metadata={} if group is None else {"group": group})
    query = np.random.default_rng(seed).standard_normal(DIM).astype(np.float32)
    text = " ".join(words)
    restored, tables = Process(path), Process(path, use_snapshots=False, loaded=True)
    try:
        got = restored.answers(query, text, filters, k)
        assert all(s.origin == "snapshot" for s in restored.states().values())  # type: ignore[attr-defined]
        assert got == tables.answers(query, text, filters, k)
    finally:
        restored.close()
        tables.close()


_SAVED: dict[str, Path] = {}


def _saved_once(factory: pytest.TempPathFactory) -> Path:
    """One saved store for every example of the property test."""
    if "path" not in _SAVED:
        path = factory.mktemp("saved") / "octomem.sqlite3"
        _build(path, n=120, seed=3)
        first = Process(path)
        first.warm()
        first.close()
        _SAVED["path"] = path
    return _SAVED["path"]


def test_closing_a_store_waits_for_its_snapshot_writers(tmp_path: Path) -> None:
    """A snapshot started by warming the filter index is written whole before close()
    returns: no writer left running, no half-written folder, and the folder can be removed
    at once (a test's temporary folder, a project deleted after its last command)."""
    import shutil
    import threading

    path = tmp_path / "db.sqlite3"
    storage = SqliteStorage(path)
    with storage.transaction() as tx:
        for i in range(200):
            doc = Document(f"text {i}", id=f"d{i}", kind="NOTE", tags=(f"t{i % 7}",))
            storage.add_document(tx, doc, [Chunk(doc.id, 0, doc.text)])
    storage.fields.sync(storage.connection())  # loads the index whole: a snapshot is due
    started = [t for t in threading.enumerate() if t.name.startswith("octomem-snapshot-")]
    assert started  # the writer is still running: close() must wait for it
    storage.close()
    assert all(not t.is_alive() for t in started)
    folder = path.with_name(path.name + ".snapshots")
    assert folder.is_dir() and not [p for p in folder.iterdir() if ".tmp" in p.name]
    assert json.loads(next(folder.glob("*.json")).read_text())
    shutil.rmtree(tmp_path / "db.sqlite3.snapshots")
