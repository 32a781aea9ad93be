"""A full disk (trial 12, F4): every write ends with one line naming the file and saying
nothing was written (exit status 1, no traceback without ``--debug``), and nothing stored
before is lost. The disk is made full by ``PRAGMA max_page_count`` on the store's
connections (SQLite answers ``SQLITE_FULL`` as for a full disk), and, where the test may
mount one (root), by a real 3 MB tmpfs under a subprocess CLI."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest
from cli_run import octomem

import octomem.plugins.sqlite.storage as sqlite_storage

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


def test_writes_to_a_full_store_end_in_one_line(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    project.mkdir()
    octomem(project, "add", "Tiny disk fact one: the ferret rotation is weekly")
    store = project / ".octomem" / "octomem.sqlite3"
    original = sqlite_storage.open_connection

    def opened(path: Path, busy_timeout_ms: int) -> apsw.Connection:
        """Open the store with no room for one more page (SQLITE_FULL, as a full disk)."""
        conn = original(path, busy_timeout_ms)
        conn.execute(f"PRAGMA max_page_count={conn.execute('PRAGMA page_count').fetchone()[0]}")
        return conn

    monkeypatch.setattr(sqlite_storage, "open_connection", opened)
    _notes(project / "notes", 30)
    for args in (("ingest", "notes"), ("add", "Another fact " + "x" * 15000)):
        ran = octomem(project, *args, ok=False)
        assert ran.code == 1, ran
        assert _one_line(ran.err) == f"error: {store}: {LINE}; free some space on the disk " \
            f"that holds {store.parent} and run the command again", ran.err
    monkeypatch.undo()
    hits = octomem(project, "search", "ferret rotation weekly", "--json").json()["hits"]
    assert hits[0]["text"] == "Tiny disk fact one: the ferret rotation is weekly"
    assert "added 30" in octomem(project, "ingest", "notes").out  # room again: all of it


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 3 MB tmpfs mounted at ``tmp_path/tiny`` (root only), unmounted after."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)],
            capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


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
