"""A full disk (trial 12, F4): every write ends with one line naming the file and saying
nothing was written (exit status 1, no traceback without ``--debug``), and nothing stored
before is lost. The disk is made full by ``PRAGMA max_page_count`` on the store's
connections (SQLite answers ``SQLITE_FULL`` as for a full disk), and, where the test may
mount one (root), by a real tmpfs under a subprocess CLI. A first ingest the disk refuses
leaves no store behind (trial 19 K3)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import apsw
import pytest
from cli_run import octomem

import octomem.plugins.sqlite.storage as sqlite_storage
from octomem.engine.errors import StoreWriteError
from octomem.engine.manager import load_registry
from octomem.engine.memory.facade import Memory
from octomem.engine.settings import load_settings

pytestmark = pytest.mark.slow

LINE = "the disk is full (database or disk is full): nothing was written"


def _notes(folder: Path, n: int) -> Path:
    folder.mkdir()
    for i in range(n):
        (folder / f"note{i}.md").write_text(
            f"# Note {i}\n\n" + f"Paragraph {i} about ferrets and their rotas. " * 80 + "\n")
    return folder


def _one_line(ran_err: str) -> str:
    lines = [line for line in ran_err.strip().splitlines() if not line.startswith("indexing ")]
    assert len(lines) == 1, ran_err
    return lines[0]


def _full_line(store: Path) -> str:
    """The one line a write the full disk refused ends with."""
    return f"error: {store}: {LINE}; free some space on the disk that holds {store.parent} " \
        "and run the command again"


def _full_at(monkeypatch: pytest.MonkeyPatch, pages: Callable[[apsw.Connection], int]
             ) -> None:
    """Open every store with room for ``pages(conn)`` pages at most (``PRAGMA
    max_page_count``: SQLITE_FULL beyond them, as a full disk)."""
    original = sqlite_storage.open_connection

    def opened(path: Path, busy_timeout_ms: int) -> apsw.Connection:
        conn = original(path, busy_timeout_ms)
        conn.execute(f"PRAGMA max_page_count={pages(conn)}")
        return conn

    monkeypatch.setattr(sqlite_storage, "open_connection", opened)


def test_writes_to_a_full_store_end_in_one_line(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    project.mkdir()
    octomem(project, "add", "Tiny disk fact one: the ferret rotation is weekly")
    store = project / ".octomem" / "octomem.sqlite3"
    _full_at(monkeypatch, lambda conn: conn.execute("PRAGMA page_count").fetchone()[0])
    _notes(project / "notes", 30)
    for args in (("ingest", "notes"), ("add", "Another fact " + "x" * 15000)):
        ran = octomem(project, *args, ok=False)
        assert ran.code == 1, ran
        assert _one_line(ran.err) == _full_line(store), ran.err
    monkeypatch.undo()
    hits = octomem(project, "search", "ferret rotation weekly", "--json").json()["hits"]
    assert hits[0]["text"] == "Tiny disk fact one: the ferret rotation is weekly"
    assert "added 30" in octomem(project, "ingest", "notes").out  # room again: all of it


def _mounted(mount: Path, size: str) -> Iterator[Path]:
    """Mount a tmpfs of ``size`` at ``mount`` (made; root only, else the test is skipped)
    for the test, unmounted after."""
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mount)],
            capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 3 MB tmpfs mounted at ``tmp_path/tiny``."""
    yield from _mounted(tmp_path / "tiny", "3m")


def test_a_really_full_disk_ends_in_one_line(tmp_path: Path, tiny_disk: Path) -> None:
    project = tiny_disk / "p"
    project.mkdir()
    octomem(project, "add", "Tiny disk fact one: the ferret rotation is weekly", spawn=True)
    store = project / ".octomem" / "octomem.sqlite3"
    _notes(tmp_path / "notes", 300)
    ran = octomem(project, "ingest", str(tmp_path / "notes"), ok=False, spawn=True)
    assert ran.code == 1, ran
    line = _one_line(ran.err)
    assert line.startswith(f"error: {store}: the disk ") and "nothing was written" in line, line
    ran = octomem(project, "forget", "Tiny disk fact one: the ferret rotation is weekly",
                  "--reason", "test", ok=False, spawn=True)
    assert ran.code in (0, 1), ran  # the ingest may have left room for a forget, or not
    if ran.code == 1:
        assert "nothing was written" in _one_line(ran.err), ran.err


def _store_pages(tmp_path: Path) -> int:
    """Pages a new store takes before anything is stored in it (its schema and vector
    set, made by opening the scope, in ``tmp_path/project``)."""
    memory = _memory(tmp_path)
    memory.scopes.require("local", create=True)
    memory.close()
    conn = apsw.Connection(str(tmp_path / "project" / ".octomem" / "octomem.sqlite3"))
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return int(conn.execute("PRAGMA page_count").fetchone()[0])
    finally:
        conn.close()


def _memory(tmp_path: Path) -> Memory:
    """A memory of the project ``tmp_path/project`` (made), the hashing embedder."""
    (tmp_path / "project").mkdir(parents=True, exist_ok=True)
    return Memory(load_settings(overrides={"pipeline": {"embedder": "hashing"}},
                                read_user_config=False), load_registry(),
                  project_root=tmp_path / "project", global_root=tmp_path / "global")


@pytest.mark.parametrize("pages", ["schema", "none"])
def test_a_first_ingest_the_disk_refuses_leaves_no_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pages: str) -> None:
    # trial 19 K3: "an ingest that stores nothing creates no store", also when the disk
    # is full: room for the new store's schema but not its first batch ("schema"), or
    # not even for the schema ("none": 1 page)
    limit = _store_pages(tmp_path / "probe") if pages == "schema" else 1
    _full_at(monkeypatch, lambda conn: limit)
    project = tmp_path / "project"
    project.mkdir()
    notes = _notes(tmp_path / "notes", 30)
    store = project / ".octomem" / "octomem.sqlite3"
    ran = octomem(project, "ingest", str(notes), ok=False)
    assert ran.code == 1
    assert _one_line(ran.err) == _full_line(store), ran.err
    assert not (project / ".octomem").exists()  # and no "created .octomem" line said
    memory = _memory(tmp_path)
    try:  # the Python API (and the MCP ingest tool) alike
        with pytest.raises(StoreWriteError, match="the disk is full"):
            memory.ingest(str(notes))
    finally:
        memory.close()
    assert not (project / ".octomem").exists()
    monkeypatch.undo()
    assert "added 30" in octomem(project, "ingest", str(notes)).out  # room again


@pytest.fixture(params=["1500k", "40k", "8k"])
def small_disk(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of 1.5 MB (room for a store, not for 300 notes), 40 kB (not for its
    schema) or 8 kB (not for its log), mounted at ``tmp_path/small``."""
    yield from _mounted(tmp_path / "small", request.param)


def test_a_first_ingest_onto_a_really_full_disk_leaves_no_store(
        tmp_path: Path, small_disk: Path) -> None:
    project = small_disk / "p"
    project.mkdir()
    _notes(tmp_path / "notes", 300)
    ran = octomem(project, "ingest", str(tmp_path / "notes"), ok=False, spawn=True)
    assert ran.code == 1, ran
    store = project / ".octomem" / "octomem.sqlite3"
    assert _one_line(ran.err) == _full_line(store), ran.err
    assert list(project.iterdir()) == []  # no .octomem/, nothing in it
