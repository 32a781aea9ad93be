"""The storage's WAL is checkpointed by a thread of its own (:mod:`octomem.plugins.sqlite.
checkpoints`), not by the commit that fills it: real SQLite files, real threads."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import apsw
import pytest

from octomem.engine.types import Chunk, Document
from octomem.plugins.sqlite import checkpoints
from octomem.plugins.sqlite.checkpoints import CHECKPOINT_PAGES
from octomem.plugins.sqlite.storage import SqliteStorage


def _checkpoint_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "octomem-checkpoint"]


def _write(storage: SqliteStorage, first: int, n: int) -> None:
    """Store ``n`` documents of ~2 KB each in one transaction (~500 pages per 1,000)."""
    with storage.transaction() as tx:
        storage.add_documents(tx, [
            (Document(f"document {i} " + "words " * 350, id=f"d{i}"),
             [Chunk(f"d{i}", 0, f"document {i} " + "words " * 350)])
            for i in range(first, first + n)])


def _wait(condition, seconds: float = 20.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_full_log_is_checkpointed_by_the_thread_not_the_commit(tmp_path: Path) -> None:
    storage = SqliteStorage(tmp_path / "octomem.sqlite3")
    try:
        conn = storage.connection()
        assert conn.execute("PRAGMA wal_autocheckpoint").get == 0  # no checkpoint in commits
        _write(storage, 0, 100)  # well under CHECKPOINT_PAGES: no thread
        assert storage.checkpoints.runs == 0 and not _checkpoint_threads()
        _write(storage, 100, 3000)
        assert _wait(lambda: storage.checkpoints.runs >= 1)
        assert _checkpoint_threads()
        busy, pages, copied = storage.checkpoints.last  # type: ignore[misc]
        assert busy == 0 and pages >= CHECKPOINT_PAGES and copied > 0
        # what the thread left: a checkpoint now has nothing more to copy of those pages
        assert _wait(lambda: conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[2]
                     == conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1])
        assert [d.id for d in storage.find_documents(
            "document 2999 " + "words " * 350)] == ["d2999"]
    finally:
        storage.close()
    assert not _checkpoint_threads()  # joined on close
    assert not (tmp_path / "octomem.sqlite3-wal").exists()  # the last connection removed it
    reopened = SqliteStorage(tmp_path / "octomem.sqlite3")
    try:
        assert reopened.connection().execute("SELECT count(*) FROM documents").get == 3100
        assert reopened.connection().execute("PRAGMA integrity_check").get == "ok"
    finally:
        reopened.close()


def test_a_file_put_in_the_stores_place_gets_no_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "octomem.sqlite3"
    storage = SqliteStorage(path)
    try:
        storage.connection()
        other = tmp_path / "other.sqlite3"
        conn = apsw.Connection(str(other))
        conn.execute("CREATE TABLE t (x); INSERT INTO t VALUES (1)")
        conn.close()
        before = other.read_bytes()
        os.replace(other, path)  # a backup moved into place while the store is open
        storage.checkpoints.request()
        assert _wait(lambda: storage.checkpoints.skipped == 1)
        assert storage.checkpoints.runs == 0
        assert path.read_bytes() == before  # no page of the old store written into it
    finally:
        storage.close()
    assert not _checkpoint_threads()


def test_requests_after_close_start_nothing(tmp_path: Path) -> None:
    storage = SqliteStorage(tmp_path / "octomem.sqlite3")
    storage.close()
    storage.checkpoints.request()
    assert storage.checkpoints.hook(None, "main", 2 * CHECKPOINT_PAGES) == apsw.SQLITE_OK  # type: ignore[arg-type]
    assert not _checkpoint_threads() and storage.checkpoints.runs == 0


def test_a_long_run_of_commits_keeps_the_log_under_the_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Commits back to back never let the log start over; at CHECKPOINT_LIMIT pages the
    committing thread checkpoints, so the log stays under the limit plus one transaction."""
    monkeypatch.setattr(checkpoints, "CHECKPOINT_LIMIT", 2 * CHECKPOINT_PAGES)
    wal = tmp_path / "octomem.sqlite3-wal"
    storage = SqliteStorage(tmp_path / "octomem.sqlite3")
    try:
        largest = 0
        for start in range(0, 12_000, 600):  # ~300 pages a transaction, ~6,000 in all
            _write(storage, start, 600)
            largest = max(largest, wal.stat().st_size)
        page = storage.connection().execute("PRAGMA page_size").get
        assert largest <= (2 * CHECKPOINT_PAGES + 400) * (page + 24) + 32
        assert storage.connection().execute("SELECT count(*) FROM documents").get == 12_000
    finally:
        storage.close()


def test_a_deletion_empties_the_log_while_the_thread_checkpoints(tmp_path: Path) -> None:
    """A forget's TRUNCATE checkpoint waits for the thread's checkpoint instead of finding
    it running ("busy"), so the log holding the deleted text is emptied at once."""
    storage = SqliteStorage(tmp_path / "octomem.sqlite3")
    wal = tmp_path / "octomem.sqlite3-wal"
    try:
        for round_ in range(3):
            _write(storage, round_ * 3000, 3000)  # wakes the thread: it checkpoints now
            with storage.transaction() as tx:
                storage.delete_document(tx, f"d{round_ * 3000}")
            assert wal.stat().st_size == 0
    finally:
        storage.close()


def test_a_commit_at_the_limit_inside_paused_checkpoints_without_deadlock(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """purge runs its TRUNCATE, and for an older file a VACUUM that commits, inside
    paused(); a commit there that reaches the limit checkpoints in the same thread."""
    monkeypatch.setattr(checkpoints, "CHECKPOINT_LIMIT", CHECKPOINT_PAGES)
    storage = SqliteStorage(tmp_path / "octomem.sqlite3")
    try:
        def write_paused() -> None:
            with storage.checkpoints.paused():
                _write(storage, 0, 3000)
        writer = threading.Thread(target=write_paused, daemon=True)
        writer.start()
        writer.join(60)
        assert not writer.is_alive()
        assert storage.connection().execute("SELECT count(*) FROM documents").get == 3000
    finally:
        storage.close()
