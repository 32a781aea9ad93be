"""A transcript or text file moved after it was ingested, then ingested from its new place
(trial 17 follow-up): its content is stored once, under the path it is at now. The
transcript's turns kept the old path (search and export named a file that is gone); the
text file became a second document beside the first (the same text twice). The CLI as a
user runs it and the MCP tool over stdio, on a real SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

from cli_run import octomem
from mcp_stdio import stdio_client


def _session(path: Path) -> Path:
    """A Claude Code session of two exchanges."""
    records = []
    for i, (question, answer) in enumerate([
            ("How do I request a laptop?", "Through the IT portal; it ships in three days."),
            ("Who approves it?", "Your team lead approves it in the portal.")]):
        for role, text, uid in (("user", question, f"u-{i}"),
                                ("assistant", [{"type": "text", "text": answer}], f"a-{i}")):
            records.append({"type": role, "uuid": uid, "sessionId": "S", "cwd": "/work/it",
                            "timestamp": f"2026-11-20T09:0{i}:0{len(records)}.000Z",
                            "message": {"role": role, "content": text}})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _uris(project: Path) -> dict[str, str | None]:
    """Every current document's id and uri, from ``export``."""
    out = octomem(project, "export", "-").out
    return {d["id"]: d.get("uri") for d in map(json.loads, out.splitlines())
            if d["type"] == "document"}  # not the header, not a forget-log record


def test_moved_files_are_stored_once_under_their_new_path(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    _session(tmp_path / "sessions" / "s1.jsonl")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "laptop.md").write_text("# Laptops\n\nRequest one in the portal.\n")
    octomem(tmp_path, "ingest", "sessions", "docs")
    before = _uris(tmp_path)
    assert len(before) == 5  # 4 turns and the file
    (tmp_path / "archive").mkdir()
    (tmp_path / "sessions").rename(tmp_path / "archive" / "sessions")
    (tmp_path / "docs").rename(tmp_path / "handbook")

    again = octomem(tmp_path, "ingest", "archive/sessions", "handbook")
    assert ("moved: docs/laptop.md -> handbook/laptop.md: the document stored from the old "
            "path is forgotten") in again.out
    assert ("archive/sessions/s1.jsonl (4 turns): added 0, replaced 4 (4 of them moved: read "
            "from a new path, the old one gone), unchanged 0 documents") in again.out
    after = _uris(tmp_path)
    assert len(after) == 5  # no turn twice, the file once
    turns = {i: u for i, u in after.items() if i.startswith("claude:")}
    assert set(turns) == {i for i in before if i.startswith("claude:")}  # the same turns
    new_session = (tmp_path / "archive" / "sessions" / "s1.jsonl").resolve().as_uri()
    assert set(turns.values()) == {new_session}
    files = [u for i, u in after.items() if i.startswith("file:")]
    assert files == [(tmp_path / "handbook" / "laptop.md").resolve().as_uri()]
    hits = octomem(tmp_path, "search", "team lead approves", "--json").json()["hits"]
    assert {h["uri"] for h in hits if h["id"].startswith("claude:")} == {new_session}
    # ingested again from there: nothing changes any more
    third = octomem(tmp_path, "ingest", "archive/sessions", "handbook")
    assert "moved" not in third.out and "replaced 0" in third.out
    assert _uris(tmp_path) == after


def test_a_copy_keeps_both_and_a_resumed_file_keeps_the_first_path(tmp_path: Path) -> None:
    # the old path still exists: a copy, not a move; nothing is forgotten or revised
    (tmp_path / ".git").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "laptop.md").write_text("# Laptops\n\nRequest one in the portal.\n")
    first = _session(tmp_path / "sessions" / "s1.jsonl")
    octomem(tmp_path, "ingest", "docs", "sessions")
    (tmp_path / "copy").mkdir()
    (tmp_path / "copy" / "laptop.md").write_text("# Laptops\n\nRequest one in the portal.\n")
    _session(tmp_path / "copy" / "s1.jsonl")
    out = octomem(tmp_path, "ingest", "copy").out
    assert "moved" not in out
    uris = _uris(tmp_path)
    assert len([i for i in uris if i.startswith("file:")]) == 2
    assert {u for i, u in uris.items() if i.startswith("claude:")} == {
        first.resolve().as_uri()}


def test_the_mcp_ingest_tool_says_what_moved(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "docs").mkdir(parents=True)
    (project / "docs" / "vpn.md").write_text("# VPN\n\nThe VPN needs the hardware key.\n")
    with stdio_client(tmp_path, project) as mcp:
        assert mcp.ok("ingest", path_or_text="docs")["counts"]["added"] == 1
        (project / "docs").rename(project / "handbook")
        again = mcp.ok("ingest", path_or_text="handbook")
        assert again["moved"] == [f"{(project / 'docs' / 'vpn.md').resolve()} -> "
                                  f"{(project / 'handbook' / 'vpn.md').resolve()}"]
        assert mcp.ok("status")["scopes"]["local"]["documents"] == 1
