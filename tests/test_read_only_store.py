"""A store that cannot be written (trial 8, item 2): writes end with one line naming the
file and what to do, reads still answer (their recall counts left unwritten, without a
traceback), the MCP server answers a tool error, and nothing stored is lost."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import apsw
import pytest
from cli_run import octomem
from mcp_stdio import stdio_client

pytestmark = pytest.mark.slow


@contextmanager
def unwritable(path: Path) -> Iterator[None]:
    """Make ``path`` read-only for this user: immutable as root (who ignores modes),
    mode 0444 otherwise; restored after."""
    root = os.geteuid() == 0
    if root:
        subprocess.run(["chattr", "+i", str(path)], check=True)
    else:
        path.chmod(0o444)
    try:
        yield
    finally:
        if root:
            subprocess.run(["chattr", "-i", str(path)], check=True)
        else:
            path.chmod(0o600)


def _texts(project: Path, query: str) -> list[str]:
    return [h["text"] for h in octomem(project, "search", query, "--json").json()["hits"]]


def test_cli_writes_refused_in_one_line_reads_answer(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    octomem(project, "add", "The kiwi fruit ripens in a paper bag")
    octomem(project, "status")  # closed cleanly: no -wal/-shm left beside the file
    store = project / ".octomem" / "octomem.sqlite3"
    (project / "note.md").write_text("Deploy keys rotate every 90 days\n")
    with unwritable(store):
        for args in (("add", "another fact"), ("ingest", "note.md"),
                     ("forget", "The kiwi fruit ripens in a paper bag")):
            ran = octomem(project, *args, ok=False, spawn=True)
            assert ran.code == 1, ran
            lines = [line for line in ran.err.strip().splitlines()
                     if not line.startswith("indexing ")]  # the progress bar, piped
            assert lines[-1] == (f"error: {store} is read-only: nothing was written; make it "
                                 "writable for this user (chmod u+w; chattr -i if it is "
                                 "immutable; a read-only mount) to store anything"), ran.err
            assert len(lines) == 1, ran.err
        found = octomem(project, "search", "kiwi paper bag", spawn=True)
        assert "kiwi fruit" in found.out
        assert "recall counts" not in found.err and "Traceback" not in found.err, found.err
    assert _texts(project, "kiwi paper bag") == ["The kiwi fruit ripens in a paper bag"]
    assert "added 1" in octomem(project, "ingest", "note.md").out  # writable again


def test_mcp_write_is_a_tool_error_recall_answers(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    octomem(project, "add", "The fig grows against the south wall")
    octomem(project, "status")
    store = project / ".octomem" / "octomem.sqlite3"
    with unwritable(store), stdio_client(tmp_path, project) as mcp:
        why = mcp.error("remember", text="The omega service runs on port 8443")
        assert f"{store} is read-only: nothing was written" in why, why
        hits = mcp.ok("recall", query="fig south wall")["hits"]
        assert [h["text"] for h in hits] == ["The fig grows against the south wall"]
        assert "is read-only" in mcp.error("ingest", path_or_text="A text to ingest here")
    assert _texts(project, "fig south wall") == ["The fig grows against the south wall"]


def test_an_older_store_read_only_opens_without_its_trigger_update(tmp_path: Path) -> None:
    """A store of before December 4 (the per-row insert trigger, no ``documents_unpurged``,
    tags never relabelled) that cannot be written still answers: that upkeep runs in a
    transaction of its own, skipped when the file is read-only, and a read writes nothing
    else (a transaction that logged nothing adds no change-log seal)."""
    project = tmp_path / "project"
    project.mkdir()
    octomem(project, "add", "The kiwi fruit ripens in a paper bag")
    store = project / ".octomem" / "octomem.sqlite3"
    conn = apsw.Connection(str(store))
    with conn:
        conn.execute("DROP TRIGGER documents_unpurged")
        conn.execute("DELETE FROM meta WHERE key = 'tags_labelled'")  # tags never relabelled
        conn.execute("CREATE TRIGGER chunks_log_insert AFTER INSERT ON chunks BEGIN INSERT "
                     "INTO vector_log (table_name, chunk_id) VALUES ('chunks', NEW.id); END")
    conn.close()
    with unwritable(store):
        found = octomem(project, "search", "kiwi paper bag", spawn=True)
        assert "kiwi fruit" in found.out and "Traceback" not in found.err, found.err
    octomem(project, "status")  # writable again: updated now
    conn = apsw.Connection(str(store))
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    labelled = conn.execute("SELECT value FROM meta WHERE key = 'tags_labelled'").fetchall()
    conn.close()
    assert "documents_unpurged" in names and "chunks_log_insert" not in names
    assert labelled == [("1",)]
