"""A file holding a NUL byte is binary, not text, though its bytes are valid UTF-8 (trial
10: ``printf 'binary\\x00file\\n' > nul.txt`` was stored and found as ``binary\\x00file``).
In a folder it is skipped with a note naming it; named on its own it is refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from cli_run import octomem

pytestmark = pytest.mark.slow


def _texts(project: Path) -> list[str]:
    with sqlite3.connect(project / ".octomem" / "octomem.sqlite3") as conn:
        return sorted(r[0] for r in conn.execute("SELECT text FROM chunks"))


def test_a_nul_byte_file_in_a_folder_is_skipped_and_named_alone_refused(
        tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "deploy.md").write_text("# Deploy\nWe deploy on Fridays.\n")
    (folder / "nul.txt").write_bytes(b"binary\x00file\n")
    done = octomem(tmp_path, "ingest", str(folder), ok=False)
    assert done.code == 1
    assert f"skipped: {folder / 'nul.txt'}: a binary file, not text (a NUL byte at byte 6)" \
        in done.err.splitlines()
    assert _texts(tmp_path) == ["# Deploy\nWe deploy on Fridays."]
    named = octomem(tmp_path, "ingest", str(folder / "nul.txt"), ok=False)
    assert named.code == 1
    assert named.err.splitlines()[-1] == (
        f"error: {folder / 'nul.txt'}: a binary file, not text (a NUL byte at byte 6)")
    assert _texts(tmp_path) == ["# Deploy\nWe deploy on Fridays."]
