"""Trial 7: importing the same export again reported its forget-log entries as new
(#20); a global root that is a file failed as an arm's NotADirectoryError (#19)."""

from __future__ import annotations

from pathlib import Path

import apsw
from cli_run import octomem


def test_reimporting_an_export_does_not_report_its_forget_log_as_new(tmp_path: Path) -> None:
    octomem(tmp_path, "add", "Staging deploys need a ticket")
    octomem(tmp_path, "add", "Old rule about deploys")
    octomem(tmp_path, "forget", "Old rule about deploys", "--reason", "replaced")
    export = tmp_path / "mem.jsonl"
    octomem(tmp_path, "export", "--scope", "local", str(export))
    first = " ".join(octomem(tmp_path, "import", str(export)).out.split())
    assert "1 unchanged" in first and "0 forget-log entries (1 more already here)" in first
    again = " ".join(octomem(tmp_path, "import", str(export)).out.split())
    assert "0 forget-log entries (1 more already here)" in again
    conn = apsw.Connection(str(tmp_path / ".octomem" / "octomem.sqlite3"))  # octomem's SQLite
    try:
        assert conn.execute("SELECT count(*) FROM forgotten").fetchone() == (1,)
    finally:
        conn.close()
    fresh = tmp_path / "fresh"  # below tmp_path's project: named, or it would import there
    fresh.mkdir()
    into_new = " ".join(octomem(fresh, "--project-root", str(fresh), "import",
                                str(export)).out.split())
    assert "1 added" in into_new and "1 forget-log entry" in into_new
    assert "already here" not in into_new


def test_a_global_root_that_is_a_file_is_named_in_one_line(tmp_path: Path) -> None:
    """Trial 7, #19: the error was NotADirectoryError from building the storage arm."""
    afile = tmp_path / "afile"
    afile.write_text("not a folder\n")
    ran = octomem(tmp_path, "search", "x", ok=False, OCTOMEM_GLOBAL_ROOT=str(afile))
    assert ran.code == 1
    assert ran.err == (
        f"error: global_root (--global-root, OCTOMEM_GLOBAL_ROOT or the config file): {afile} "
        "is a file, not a folder; the global scope keeps its store in a folder: point the "
        "setting at one\n")
