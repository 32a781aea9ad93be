"""``ingest`` as trial 7 found it: a named path that cannot be read no longer aborts the
others (#2); a folder whose sessions hold no turn says so (#5); a folder ingest that only
skipped files still prints its summary (#16); a ``.jsonl`` of blank lines is an empty
file (#18). The CLI runs as a user runs it, on a real SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

from cli_run import octomem


def _stored(project: Path) -> str:
    return octomem(project, "export", "-").out


def test_a_named_file_that_is_no_transcript_fails_after_the_others_are_stored(
        tmp_path: Path) -> None:
    (tmp_path / "other.jsonl").write_text('{"foo": "bar"}\n')
    (tmp_path / "fresh1.md").write_text("Fresh note one about the parser.\n")
    (tmp_path / "fresh2.md").write_text("Fresh note two about the lexer.\n")
    ran = octomem(tmp_path, "ingest", "other.jsonl", "fresh1.md", "nonexist.md", "fresh2.md",
                  ok=False)
    assert ran.code == 1
    assert "added 2, replaced 0, unchanged 0 documents" in ran.out
    error = ran.err.strip().splitlines()[-1]
    assert error.startswith("error: other.jsonl: neither a chat transcript")
    assert "; nonexist.md: no such file or folder" in error
    stored = _stored(tmp_path)
    assert "Fresh note one" in stored and "Fresh note two" in stored


def test_only_bad_named_paths_store_nothing_and_create_no_store(tmp_path: Path) -> None:
    (tmp_path / "other.jsonl").write_text('{"foo": "bar"}\n')
    ran = octomem(tmp_path, "ingest", "other.jsonl", "nonexist.md", ok=False)
    assert ran.code == 1 and ran.out == ""
    assert ran.err.strip() == (
        "error: other.jsonl: neither a chat transcript (lines with 'text' and 'speaker' or "
        "'role') nor a Claude Code session (lines with 'type' and 'sessionId'); see "
        "docs/conversations.md; nonexist.md: no such file or folder")
    assert not (tmp_path / ".octomem").exists()


def test_a_folder_of_sessions_without_turns_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    (folder / "onlysummary.jsonl").write_text(
        json.dumps({"type": "summary", "summary": "only a summary", "leafUuid": "z"}) + "\n")
    (folder / "other.jsonl").write_text(
        json.dumps({"type": "summary", "summary": "another", "leafUuid": "y"}) + "\n")
    ran = octomem(tmp_path, "ingest", "--format", "claude-code", "sessions", ok=False)
    assert ran.code == 1
    assert ran.out.splitlines() == [
        "added 0, replaced 0, unchanged 0 documents; 0 chunks indexed, 0 embedded"]
    assert f"note: {Path('sessions') / 'onlysummary.jsonl'}: no turns in it" in ran.err
    assert ran.err.strip().splitlines()[-1] == (
        "error: sessions: no turns in its 2 transcripts (each noted above)")


def test_a_folder_that_only_skipped_files_prints_its_summary(tmp_path: Path) -> None:
    folder = tmp_path / "chats"
    folder.mkdir()
    (folder / "broken.jsonl").write_text('{"text": "hi", "speaker": "user"}\nnot json\n')
    (folder / "blank.jsonl").write_text("\n\n")
    ran = octomem(tmp_path, "ingest", "--format", "chat", "chats", ok=False)
    assert ran.code == 1
    assert ran.out.splitlines() == [
        "added 0, replaced 0, unchanged 0 documents; 0 chunks indexed, 0 embedded"]
    assert ran.err.strip().splitlines()[-1] == (
        "error: 1 file in the folders skipped for an error (each noted above as skipped:); "
        "nothing else was there to store")


def test_a_named_jsonl_of_blank_lines_is_an_empty_file(tmp_path: Path) -> None:
    (tmp_path / "blank.jsonl").write_text("\n\n  \n")
    ran = octomem(tmp_path, "ingest", "blank.jsonl", ok=False)
    assert ran.err.strip() == f"error: {Path('blank.jsonl')}: empty file"
