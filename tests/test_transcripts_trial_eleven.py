"""Transcripts ingested again, as trial 11 met them: a line deleted from the middle, two
files named alike, empty turns, the files a folder ingest leaves alone, times without a
zone. Real SQLite stores, the CLI as a user runs it."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from cli_run import octomem
from mcp_stdio import stdio_client

from octomem.engine.memory.facade import Memory

STANDUP = [
    {"speaker": "user", "text": "Standup: I finished the CSV exporter."},
    {"speaker": "assistant", "text": "Great, which exporter is next on your list?"},
    {"speaker": "Lee", "text": "The XLSX exporter is unblocked, licence approved by legal."},
]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def local_counts(project: Path) -> dict:
    scope = octomem(project, "status", "--json").json()["scopes"]["local"]
    return {k: scope[k] for k in ("documents", "current", "superseded", "forgotten")}


def test_cli_a_line_deleted_from_the_middle_leaves_no_phantom_turn(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "standup.jsonl", STANDUP)
    octomem(tmp_path, "ingest", "standup.jsonl")
    write_jsonl(path, [STANDUP[0], STANDUP[2]])  # `sed -i 2d`: Lee's turn moves up
    again = octomem(tmp_path, "ingest", "standup.jsonl")
    assert again.out.startswith("standup.jsonl (2 turns): added 0, replaced 1, unchanged 1 "
                                "document, 1 turn no longer in the file forgotten;"), again.out
    assert local_counts(tmp_path) == {"documents": 2, "current": 2, "superseded": 0,
                                      "forgotten": 1}
    hit = octomem(tmp_path, "search", "CSV exporter finished", "--context", "2", "-k", "1",
                  "--json").json()["hits"][0]
    assert hit["id"] == "standup:0"
    assert [(c["id"], c["text"]) for c in hit["context"]] == [
        ("standup:1", "Lee: The XLSX exporter is unblocked, licence approved by legal.")]
    same = octomem(tmp_path, "ingest", "standup.jsonl")  # nothing more to retire
    assert same.out.startswith("standup.jsonl (2 turns): added 0, replaced 0, unchanged 2 "
                               "documents;"), same.out
    write_jsonl(path, STANDUP)  # the line is back: stored again (no tombstone)
    back = octomem(tmp_path, "ingest", "standup.jsonl")
    assert back.out.startswith("standup.jsonl (3 turns): added 1, replaced 1, unchanged 1 "
                               "document;"), back.out
    assert local_counts(tmp_path)["current"] == 3


def test_cli_on_missing_keep_keeps_the_turns_a_transcript_lost(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "standup.jsonl", STANDUP)
    octomem(tmp_path, "ingest", "standup.jsonl")
    write_jsonl(path, STANDUP[:2])
    kept = octomem(tmp_path, "--set", "ingest.on_missing=keep", "ingest", "standup.jsonl")
    assert kept.out.startswith("standup.jsonl (2 turns): added 0, replaced 0, unchanged 2 "
                               "documents, 1 turn no longer in the file kept "
                               "(ingest.on_missing = keep);"), kept.out
    assert local_counts(tmp_path)["current"] == 3


def test_engine_retires_gone_turns_of_this_file_only(memory: Memory, tmp_path: Path) -> None:
    root = tmp_path / "project"
    standup = write_jsonl(root / "standup.jsonl", STANDUP)
    other = write_jsonl(root / "other.jsonl", [  # another file, the same conversation name
        {"conversation": "standup", "id": "o1", "speaker": "Kim", "text": "Other file here."}])
    memory.ingest(str(standup))
    memory.ingest(str(other))
    grown = [*STANDUP, {"speaker": "user", "text": "And the PDF exporter?"}]
    write_jsonl(standup, grown)  # grew: only its new turn added, nothing retired
    _, report = memory.ingest(str(standup))
    assert report.added == ["standup:3"] and report.missing == []
    moved = root / "chats" / "standup.jsonl"  # moved, and a line deleted
    moved.parent.mkdir()
    standup.rename(moved)
    write_jsonl(moved, [grown[0], *grown[2:]])
    _, report = memory.ingest(str(moved))
    # standup:0 unchanged, read from the new path: stored again there (moved)
    assert report.replaced == ["standup:0", "standup:1", "standup:2"]
    assert report.moved == ["standup:0"]
    assert [(g.id, Path(g.path).name) for g in report.forgotten] == [
        ("standup:3", "standup.jsonl")]
    storage = memory.scopes.require("local").arms.storage
    assert storage.get_document("o1") is not None  # another file's turn: untouched
    assert storage.get_document("standup:3") is None
    assert storage.get_forgotten("standup:3").reason.startswith("turn gone: ")


def test_cli_transcripts_named_alike_in_two_folders_are_both_stored(tmp_path: Path) -> None:
    old = write_jsonl(tmp_path / "chats" / "2024" / "trip.jsonl", [
        {"speaker": "Ana", "text": "We took the night train to Vienna."}])
    octomem(tmp_path, "ingest", str(old))  # a store made before: ids trip:N
    write_jsonl(tmp_path / "chats" / "2025" / "trip.jsonl", [
        {"speaker": "Ana", "text": "This year we flew to Lisbon."},
        {"speaker": "Ben", "text": "And stayed in Alfama."}])
    both = octomem(tmp_path, "ingest", "chats")
    assert "trip.jsonl (1 turn): added 0, replaced 0, unchanged 1 document;" in both.out
    assert "trip.jsonl (2 turns): added 2, replaced 0, unchanged 0 documents;" in both.out
    again = octomem(tmp_path, "ingest", "chats")  # ingested again: not one duplicate
    assert "added 0, replaced 0, unchanged 2 documents;" in again.out, again.out
    assert local_counts(tmp_path) == {"documents": 3, "current": 3, "superseded": 0,
                                      "forgotten": 0}
    exported = octomem(tmp_path, "export", "--scope", "local", "-").out.splitlines()
    rows = [json.loads(line) for line in exported]
    assert sorted((r["id"], r["metadata"]["conversation"]) for r in rows if "metadata" in r) == [
        ("2025/trip:0", "2025/trip"), ("2025/trip:1", "2025/trip"), ("trip:0", "trip")]


def test_cli_a_line_with_no_text_is_left_out_and_counted(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "standup.jsonl", [
        STANDUP[0], {"speaker": "assistant", "text": ""}, STANDUP[2],
        {"speaker": "assistant", "text": None}, {"speaker": "user", "text": "  "}])
    done = octomem(tmp_path, "ingest", "standup.jsonl")
    assert "note: standup.jsonl: 3 lines with no text left out (lines 2, 4, 5)" in done.err
    assert done.out.startswith("standup.jsonl (2 turns): added 2, replaced 0, unchanged 0 "
                               "documents;"), done.out
    rows = [json.loads(line) for line in
            octomem(tmp_path, "export", "--scope", "local", "-").out.splitlines()]
    assert sorted(r["id"] for r in rows if "metadata" in r) == ["standup:0", "standup:1"]
    broken = write_jsonl(tmp_path / "broken.jsonl", [  # malformed lines: still errors
        STANDUP[0], {"speaker": "Lee", "text": ""}, {"speaker": "Lee", "text": ["x"]},
        {"speaker": "Lee", "text": "", "colour": "red"}])
    failed = octomem(tmp_path, "ingest", str(broken), ok=False)
    assert failed.code == 1
    assert f"{broken}:3: 'text' must be a non-empty string, got [\"x\"]" in failed.err
    assert f"{broken}:4: unknown field 'colour'" in failed.err
    assert local_counts(tmp_path)["documents"] == 2  # nothing of broken.jsonl


@pytest.mark.slow
def test_mcp_ingest_lists_the_lines_with_no_text(tmp_path: Path) -> None:
    project = tmp_path / "project"
    write_jsonl(project / "standup.jsonl", [STANDUP[0], {"speaker": "Lee", "text": ""}])
    with stdio_client(tmp_path, project) as mcp:
        done = mcp.ok("ingest", path_or_text="standup.jsonl")
    assert done["added"] == ["standup:0"]
    assert done["empty_lines"] == [
        f"{project / 'standup.jsonl'}: 1 line with no text left out (line 2)"]


def test_cli_a_folder_ingest_names_the_files_it_left_alone(tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    write_jsonl(bad / "notranscript.jsonl", [{"title": "x", "body": "y"}])
    write_jsonl(bad / "noturn.jsonl", [{"speaker": "Ana"}])
    (bad / "notes.md").write_text("The coffee machine is on floor 2.\n")
    for n in range(7):
        (bad / f"tool{n}.py").write_text("print()\n")
    done = octomem(tmp_path, "ingest", "bad")
    neither = ("neither a chat transcript (lines with 'text' and 'speaker' or 'role') nor a "
               "Claude Code session (lines with 'type' and 'sessionId'); see "
               "docs/conversations.md")
    assert done.err.splitlines()[:4] == [
        "left alone: 9 files in the folders, not read:",
        f"  bad/notranscript.jsonl: a .jsonl file that is no transcript: {neither}",
        f"  bad/noturn.jsonl: a .jsonl file that is no transcript: {neither}",
        "  not a text file or transcript (reads .jsonl, .markdown, .md, .rst, .text, .txt): "
        "bad/tool0.py, bad/tool1.py, bad/tool2.py, bad/tool3.py, bad/tool4.py and 2 more"]
    chats = octomem(tmp_path, "ingest", "--format", "chat", "bad", ok=False)
    assert "  bad/notes.md: a text file: --format chat reads .jsonl transcripts only" in \
        chats.err.splitlines()


@pytest.mark.slow
def test_mcp_ingest_refusal_says_exactly_how_to_allow_claude_code_sessions(
        tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    home = Path(tempfile.mkdtemp(prefix="h11"))  # a home path as short as a real one
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    sessions = home / ".claude" / "projects" / "-work-proj"
    write_jsonl(sessions / "s1.jsonl", [
        {"type": "user", "sessionId": "s1", "uuid": "u1", "timestamp": "2025-03-04T09:12:00Z",
         "message": {"role": "user", "content": "Deploys happen on Thursdays."}}])
    allowed = json.dumps([str(sessions.resolve())])
    config = home / ".config" / "octomem" / "config.toml"
    try:
        with stdio_client(tmp_path, project, **env) as mcp:
            refused = mcp.error("ingest", path_or_text="~/.claude/projects/-work-proj")
        assert "\n" not in refused and "…" not in refused  # whole: under the 500-character cut
        assert refused.endswith(
            f"so the MCP ingest tool does not read it; to allow it, add `allowed_roots = "
            f"{allowed}` under `[ingest]` in {config} (or that list in "
            "OCTOMEM_INGEST__ALLOWED_ROOTS) and restart the MCP server, or run `octomem "
            "ingest` on it yourself"), refused
        with stdio_client(tmp_path, project, OCTOMEM_INGEST__ALLOWED_ROOTS=allowed,
                          **env) as mcp:  # as the message says: the environment variable
            done = mcp.ok("ingest", path_or_text="~/.claude/projects/-work-proj")
            assert done["added"] == ["claude:u1"]
        config.parent.mkdir(parents=True)  # or the line in the settings file
        config.write_text(f"[ingest]\nallowed_roots = {allowed}\n", encoding="utf-8")
        with stdio_client(tmp_path, project, **env) as mcp:
            done = mcp.ok("ingest", path_or_text=str(sessions / "s1.jsonl"))
            assert done["unchanged"] == ["claude:u1"]
    finally:
        shutil.rmtree(home)


def test_cli_a_transcript_ingested_again_is_named_and_zoneless_times_are_utc(
        tmp_path: Path) -> None:
    write_jsonl(tmp_path / "chats" / "trip.jsonl", [
        {"speaker": "Ana", "text": "Shall we take the night train?", "time": "2025-03-03 09:00"},
        {"speaker": "Ben", "text": "Yes, the 23:10.", "time": "2025-03-03T09:01:00+01:00"}])
    for added, unchanged in ((2, "0 documents"), (0, "2 documents")):
        done = octomem(tmp_path, "ingest", "chats/trip.jsonl")
        assert done.out.startswith(f"chats/trip.jsonl (2 turns): added {added}, replaced 0, "
                                   f"unchanged {unchanged};"), done.out
    rows = [json.loads(line) for line in
            octomem(tmp_path, "export", "--scope", "local", "-").out.splitlines()]
    times = {r["id"]: (r["metadata"]["time"], r["event_time"]) for r in rows if "metadata" in r}
    assert times == {"trip:0": ("2025-03-03T09:00:00+00:00", "2025-03-03T09:00:00Z"),
                     "trip:1": ("2025-03-03T09:01:00+01:00", "2025-03-03T08:01:00Z")}


def test_engine_retires_gone_turns_of_a_transcript_of_many_conversations(
        memory: Memory, tmp_path: Path) -> None:
    rows = [{"conversation": f"c{i % 6}", "speaker": "Ana", "text": f"Line {i} of many."}
            for i in range(18)]  # more conversations than are looked up one by one
    path = write_jsonl(tmp_path / "many.jsonl", rows)
    other = write_jsonl(tmp_path / "other.jsonl", [
        {"conversation": "c5", "id": "keep-me", "speaker": "Kim", "text": "Not from many."}])
    memory.ingest(str(path))
    memory.ingest(str(other))
    write_jsonl(path, [r for i, r in enumerate(rows) if i != 4])  # c4's first line
    _, report = memory.ingest(str(path))
    assert report.replaced == ["c4:0", "c4:1"]
    assert [g.id for g in report.forgotten] == ["c4:2"]
    assert memory.scopes.require("local").arms.storage.get_document("keep-me") is not None
