"""A malformed Claude Code session names every bad line, like a chat transcript, and an
ingest that stores nothing leaves no new store behind: a bad transcript, a bad text file
or a folder of bad files ingested into a project without memory yet ends with its error
and no ``.octomem`` folder (the CLI and the MCP ``ingest`` alike)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from cli_run import octomem

from octomem.engine.errors import OctomemError
from octomem.engine.memory.facade import Memory


def _record(kind: str, uuid: str, text: str | None, when: str = "2025-03-04T09:12:00Z") -> str:
    """One Claude Code user/assistant record (``text=None``: no message object)."""
    row: dict = {"type": kind, "sessionId": "s-1", "uuid": uuid, "timestamp": when,
                 "cwd": "/home/dev/app"}
    if text is not None:
        row["message"] = {"role": kind, "content": [{"type": "text", "text": text}]}
    return json.dumps(row) + "\n"


def _bad_session(path: Path) -> Path:
    """Write a Claude Code session with five bad lines (one before any good record)."""
    path.write_text(
        "{oops\n"                                                 # 1: not JSON
        + _record("user", "u1", "Which database for billing?")    # 2
        + _record("assistant", "a1", None)                        # 3: no message
        + "[1, 2]\n"                                              # 4: not an object
        + _record("assistant", "a2", "PostgreSQL 16.")            # 5
        + _record("user", "u2", "And backups?", when="soon")      # 6: bad timestamp
        + "\n"                                                    # blank: passed over
        + _record("assistant", "a3", "To Frankfurt.")             # 8
        + '"just a string"\n')                                    # 9: not an object
    return path


def test_a_malformed_claude_code_session_names_every_bad_line(tmp_path: Path) -> None:
    session = _bad_session(tmp_path / "5f0c2a9e.jsonl")
    for args in ((str(session),), ("--format", "claude-code", str(session))):
        ran = octomem(tmp_path, "ingest", *args, ok=False)
        assert ran.code == 1 and ran.out == "", ran
        assert ran.err.strip().splitlines() == [
            f"error: {session}:1: not valid JSON: Expecting property name enclosed in double "
            f"quotes at column 2; {session}:3: an assistant record without a 'message' object; "
            f"{session}:4: expected a JSON object, got list; {session}:6: 'timestamp': "
            "'soon' is not an ISO-8601 time (e.g. 2024-05-01T10:00:00Z); "
            f"{session}:9: expected a JSON object, got str"], ran.err
    assert not (tmp_path / ".octomem").exists()  # nothing of it stored, no store made


def test_a_claude_code_session_with_many_bad_lines_names_twenty(tmp_path: Path) -> None:
    session = tmp_path / "many.jsonl"
    session.write_text(_record("user", "u1", "hello") + "oops\n" * 23
                       + _record("assistant", "a1", "hi"))
    err = octomem(tmp_path, "ingest", str(session), ok=False).err.strip().splitlines()[-1]
    assert err.count(f"{session}:") == 20 and err.endswith("; and 3 more bad lines"), err
    assert f"{session}:21: not valid JSON" in err and f"{session}:22:" not in err


def test_a_failed_first_ingest_leaves_no_store(tmp_path: Path) -> None:
    (tmp_path / "bad.md").write_bytes(b"\xff\xfe not text")
    (tmp_path / "empty.md").write_text("")
    folder = tmp_path / "sessions"
    folder.mkdir()
    _bad_session(folder / "one.jsonl")
    chat = tmp_path / "chat.jsonl"
    chat.write_text('{"speaker": "Ana", "text": "hi"}\n{"speeker": "Ben", "text": "yo"}\n')
    cases = {
        ("chat.jsonl",): f"error: {chat.name}:2: unknown field 'speeker'",
        ("bad.md",): "error: bad.md: not UTF-8 text (invalid start byte at byte 0)",
        ("empty.md", "bad.md"): "error: empty.md: empty file; bad.md: not UTF-8 text",
        ("sessions",): "error: 1 file in the folders skipped for an error (each noted above "
                       "as skipped:); nothing else was there to store",
    }
    for args, error in cases.items():
        ran = octomem(tmp_path, "ingest", *args, ok=False)
        assert ran.code == 1 and ran.err.strip().splitlines()[-1].startswith(error), ran
        assert not (tmp_path / ".octomem").exists(), args
    scoped = octomem(tmp_path, "ingest", "--scope", "global", "chat.jsonl",
                     OCTOMEM_GLOBAL_ROOT=str(tmp_path / "g"), ok=False)
    assert scoped.code == 1 and not (tmp_path / "g").exists(), scoped
    status = octomem(tmp_path, "status", "--json").json()
    assert status["scopes"]["local"]["exists"] is False, status


def test_the_store_is_made_by_the_first_ingest_that_stores_something(tmp_path: Path) -> None:
    (tmp_path / "bad.md").write_bytes(b"\xff\xfe not text")
    (tmp_path / "notes.md").write_text("The billing service uses PostgreSQL 16.\n")
    ran = octomem(tmp_path, "ingest", "bad.md", "notes.md", ok=False)
    assert ran.code == 1 and ran.out.startswith("added 1, replaced 0"), ran
    with sqlite3.connect(tmp_path / ".octomem" / "octomem.sqlite3") as conn:
        uris = [r[0] for r in conn.execute("SELECT uri FROM documents")]
    assert uris == [(tmp_path / "notes.md").resolve().as_uri()]
    again = octomem(tmp_path, "ingest", "bad.md", ok=False)  # the store exists: unchanged
    assert again.code == 1 and (tmp_path / ".octomem").is_dir()


def test_the_mcp_ingest_that_stores_nothing_makes_no_store(memory: Memory,
                                                          tmp_path: Path) -> None:
    folder = tmp_path / "project" / "sessions"
    folder.mkdir()
    _bad_session(folder / "one.jsonl")
    with pytest.raises(OctomemError, match=r"no file in .*sessions could be ingested: .*"
                                           r"one.jsonl:1: not valid JSON"):
        memory.ingest(str(folder))
    (folder / "one.jsonl").write_text(json.dumps(  # Claude Code records, none a turn
        {"type": "summary", "summary": "Billing", "leafUuid": "u1"}) + "\n")
    scope, report = memory.ingest(str(folder))
    assert scope == "local" and not report.added and not report.skipped
    assert not (tmp_path / "project" / ".octomem").exists()
    (folder / "two.md").write_text("Backups go to Frankfurt.\n")
    assert len(memory.ingest(str(folder))[1].added) == 1
    assert (tmp_path / "project" / ".octomem" / "octomem.sqlite3").is_file()
