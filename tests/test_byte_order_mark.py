"""Files that start with a UTF-8 byte-order mark (as some Windows editors write them) are
read without it: a chat or Claude Code transcript is JSON from its first line on, a
Markdown file's ``# heading`` is its title and its stored text has no ``\\ufeff``, an
export imports. The CLI runs as a user runs it, on a real SQLite file."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

from cli_run import octomem

BOM = codecs.BOM_UTF8


def _rows(project: Path) -> dict[str, dict]:
    lines = octomem(project, "export", "-").out.splitlines()
    return {row["id"]: row for row in map(json.loads, lines[1:])}


def test_a_chat_transcript_with_a_bom_is_read_from_its_first_line(tmp_path: Path) -> None:
    (tmp_path / "chat.jsonl").write_bytes(BOM + (
        b'{"speaker": "alice", "text": "The deploy key rotates on Fridays."}\n'
        b'{"speaker": "bob", "text": "Noted."}\n'))
    ran = octomem(tmp_path, "ingest", "chat.jsonl")
    assert ran.out.startswith("chat.jsonl (2 turns): added 2, replaced 0,")
    rows = _rows(tmp_path)
    assert rows["chat:0"]["text"] == "alice: The deploy key rotates on Fridays."
    assert rows["chat:0"]["metadata"]["speaker"] == "alice"


def test_a_claude_code_session_with_a_bom_is_sniffed_in_a_folder(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    records = [{"type": "user", "sessionId": "s1", "uuid": "u1",
                "timestamp": "2026-11-30T09:00:00Z",
                "message": {"role": "user", "content": "Why does the build fail on ARM?"}}]
    (folder / "s1.jsonl").write_bytes(
        BOM + "".join(json.dumps(r) + "\n" for r in records).encode())
    ran = octomem(tmp_path, "ingest", "sessions")
    assert "added 1," in ran.out, (ran.out, ran.err)
    texts = [row["text"] for row in _rows(tmp_path).values()]
    assert any("Why does the build fail on ARM?" in text for text in texts), texts


def test_a_markdown_file_with_a_bom_keeps_its_heading_as_title(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_bytes(
        BOM + b"# Release notes\n\nThe parser handles tabs now.\n")
    octomem(tmp_path, "ingest", "notes.md")
    (row,) = _rows(tmp_path).values()
    assert row["title"] == "Release notes"
    assert row["text"] == "# Release notes\n\nThe parser handles tabs now.\n"
    assert row["chunks"][0]["text"].startswith("# Release notes")


def test_a_bad_byte_after_a_bom_is_named_at_its_place_in_the_file(tmp_path: Path) -> None:
    (tmp_path / "latin.txt").write_bytes(BOM + b"caf\xe9\n")
    ran = octomem(tmp_path, "ingest", "latin.txt", ok=False)
    assert ran.code == 1
    assert ran.err.strip().splitlines()[-1] == (
        "error: latin.txt: not UTF-8 text (invalid continuation byte at byte 6)")


def test_an_export_saved_with_a_bom_imports(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("# Notes\n\nThe cache expires after ten minutes.\n")
    octomem(tmp_path, "ingest", "notes.md")
    exported = octomem(tmp_path, "export", "-").out
    other = tmp_path / "other"
    other.mkdir()
    (other / "saved.jsonl").write_bytes(BOM + exported.encode())
    octomem(other, "import", "saved.jsonl")
    assert "The cache expires after ten minutes." in octomem(other, "export", "-").out
