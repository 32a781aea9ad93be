"""Claude Code sessions as a fresh user's trial found them (trial 18, 2026-12-03).

- H11: a session the user rewound (Esc Esc, then an edited message) keeps the abandoned
  branch in its file; it was stored as current, the rejected answer ranking first.
- H14: a JSON-escaped lone surrogate (``\\udcef``: Claude Code logging a file's
  non-UTF-8 bytes, or an emoji cut in half) stopped the ingest with a raw
  ``UnicodeEncodeError``; the folder's later files were not stored.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_run import octomem
from mcp_stdio import stdio_client
from test_trial_eighteen import record, write

from octomem.engine.memory.facade import Memory
from octomem.engine.memory.own_turns import check_own_turns, turn_owner
from octomem.engine.memory.transcripts import read_claude_code


def turn(uuid: str, parent: str | None, role: str, text: str, second: int,
         **extra: object) -> dict[str, object]:
    """A record of session ``R`` following ``parent``."""
    content: object = text if role == "user" else [{"type": "text", "text": text}]
    return record(uuid, role, content, 30, second, "R", parentUuid=parent, **extra)


def rewound(folder: Path) -> Path:
    """The user asked, got a dangerous answer, rewound and asked again (a sibling of the
    first question: the same parent), and kept the second answer."""
    folder.mkdir(exist_ok=True)
    return write(folder / "r.jsonl", [
        turn("u-0", None, "user", "Set up the local dev server for the shop.", 0),
        turn("a-0", "u-0", "assistant", "Done: run make dev.", 3),
        turn("u-1", "a-0", "user", "Which port and database should the dev server use?", 6),
        turn("a-1", "u-1", "assistant", "Use port 8080 with the production replica db-prod-ro.", 9),
        turn("u-1b", "a-0", "user", "Which port and database for the dev server? Not prod.", 12),
        turn("a-1b", "u-1b", "assistant", "Use port 9090 with the fixture db/dev.sqlite3.", 15),
    ])


def test_a_rewound_session_is_read_along_the_branch_it_ended_on(tmp_path: Path) -> None:
    notes: list[str] = []
    turns = read_claude_code(rewound(tmp_path), notes)
    assert [(t.id, t.text, t.metadata["position"]) for t in turns] == [
        ("claude:u-0", "user: Set up the local dev server for the shop.", 0),
        ("claude:a-0", "assistant: Done: run make dev.", 1),
        ("claude:u-1b", "user: Which port and database for the dev server? Not prod.", 2),
        ("claude:a-1b", "assistant: Use port 9090 with the fixture db/dev.sqlite3.", 3),
    ]
    assert notes == [f"{tmp_path / 'r.jsonl'}: left out 2 messages of a branch the user "
                     "rewound away from (Esc Esc and an edited message); the session goes "
                     "on from the edited one"]


def test_the_rejected_answer_is_not_recalled(memory: Memory, tmp_path: Path) -> None:
    """Stored before the user rewound: the next ingest forgets the abandoned turns as
    turns gone from the file."""
    session = rewound(tmp_path / "cc")
    lines = session.read_text().splitlines(keepends=True)
    session.write_text("".join(lines[:4]))  # before the rewind
    memory.ingest(str(tmp_path / "cc"), fmt="claude-code")
    session.write_text("".join(lines))
    _, report = memory.ingest(str(tmp_path / "cc"), fmt="claude-code")
    assert sorted(report.added) == ["claude:a-1b", "claude:u-1b"]
    assert sorted(gone.id for gone in report.forgotten) == ["claude:a-1", "claude:u-1"]
    answer = memory.recall("which port and database should the dev server use?", top_k=4)
    assert "claude:a-1" not in {hit.chunk.document_id for hit in answer.hits}
    assert "db-prod-ro" not in " ".join(hit.chunk.text for hit in answer.hits)


@pytest.mark.slow
def test_mcp_ingest_lists_a_rewound_branch_as_messages_left_out(tmp_path: Path) -> None:
    """Over a real MCP client (stdio): the rewound branch's note is under
    ``messages_left_out`` (left out on purpose), not ``unfinished`` (a last line still being
    written, read next time); so is a chat's system line."""
    project = tmp_path / "project"
    project.mkdir()
    session = rewound(project / "cc")
    write(project / "chat.jsonl", [{"role": "system", "text": "You are a helpful assistant."},
                                   {"role": "user", "text": "Where is the VPN config?"}])
    with stdio_client(tmp_path, project) as mcp:
        done = mcp.ok("ingest", path_or_text="cc", format="claude-code")
        chat = mcp.ok("ingest", path_or_text="chat.jsonl")
    assert sorted(done["added"]) == ["claude:a-0", "claude:a-1b", "claude:u-0", "claude:u-1b"]
    assert done["unfinished"] == [] and done["counts"]["unfinished"] == 0
    assert done["messages_left_out"] == [
        f"{session.resolve()}: left out 2 messages of a branch the user rewound away from (Esc "
        "Esc and an edited message); the session goes on from the edited one"]
    assert chat["unfinished"] == [] and chat["messages_left_out"] == [
        f"{(project / 'chat.jsonl').resolve()}: 1 line of the system's instructions left out "
        "(role system, developer or tool: line 1)"]


def test_each_turn_is_looked_up_in_the_store_once(memory: Memory, tmp_path: Path) -> None:
    """Checking a re-ingested session's turn ids asks the store about each id once (both
    checks, kinds and clashes, used to ask twice), and keeps the session's own ids."""
    session = rewound(tmp_path / "cc")
    memory.ingest(str(tmp_path / "cc"), fmt="claude-code")
    stored = turn_owner(memory.scopes.get("local").arms.storage)
    asked: list[str] = []

    def owner(document_id: str) -> tuple[str | None, str, str] | None:
        asked.append(document_id)
        return stored(document_id)

    turns = read_claude_code(session, [])
    assert check_own_turns(session, turns, owner, {}) == turns
    assert sorted(asked) == sorted(t.id for t in turns) and len(turns) == 4
    assert stored("claude:u-0") == (session.resolve().as_uri(), turns[0].text, "TURN")


def test_forks_claude_code_makes_itself_and_broken_chains_keep_every_turn(
        tmp_path: Path) -> None:
    """Parallel tool results (siblings without text), a compaction boundary whose
    ``parentUuid`` is empty (``logicalParentUuid`` followed) and a resumed part whose first
    record names no parent: nothing the user said is left out."""
    result = {"type": "tool_result", "tool_use_id": "t", "content": "ok"}
    session = write(tmp_path / "s.jsonl", [
        turn("u-0", None, "user", "Run both test suites.", 0),
        turn("a-0", "u-0", "assistant", "Running them.", 1),
        record("r-1", "user", [result], 30, 2, "R", parentUuid="a-0"),
        record("r-2", "user", [result], 30, 3, "R", parentUuid="a-0"),
        turn("a-1", "r-2", "assistant", "Both pass.", 4),
        {"type": "system", "subtype": "compact_boundary", "uuid": "c-0", "parentUuid": None,
         "logicalParentUuid": "a-1", "sessionId": "R"},
        turn("u-2", "c-0", "user", "Now tag the release.", 6),
        turn("u-3", None, "user", "(resumed) Did the tag push?", 7),
        turn("a-3", "u-3", "assistant", "Yes, v1.4.0 is on origin.", 8),
    ])
    notes: list[str] = []
    assert [(t.id, t.text) for t in read_claude_code(session, notes)] == [
        ("claude:u-0", "user: Run both test suites."),
        ("claude:a-0", "assistant: Running them.\n\nBoth pass."),
        ("claude:u-2", "user: Now tag the release."),
        ("claude:u-3", "user: (resumed) Did the tag push?"),
        ("claude:a-3", "assistant: Yes, v1.4.0 is on origin.")]
    assert notes == []


def test_a_lone_surrogate_is_read_as_the_replacement_character(project: Path) -> None:
    """Claude Code, chat and BEIR lines, each through the CLI; the folder's file after the
    bad one is stored too, and ``import`` of an export holding one works."""
    folder = project / "cc"
    folder.mkdir()
    write(folder / "s1.jsonl", [turn("u-1", None, "user", "Which file holds the importer?", 0)])
    (folder / "s2.jsonl").write_text(json.dumps(
        turn("v-1", None, "user", "naXve legacy file", 1)).replace("X", "\\udcef") + "\n")
    write(folder / "s3.jsonl", [turn("w-1", None, "user", "Which file holds the payments?", 2)])
    ran = octomem(project, "ingest", "--format", "claude-code", "cc")
    assert "3 turns" not in ran.err and "error" not in ran.err.lower(), ran.err
    (project / "chat.jsonl").write_text('{"speaker":"Ana","text":"cut emoji \\ud83d here"}\n')
    octomem(project, "ingest", "chat.jsonl")
    (project / "b").mkdir()
    (project / "b" / "corpus.jsonl").write_text('{"_id":"1","text":"abstract \\udc00 lone"}\n')
    octomem(project, "ingest", "--beir", "b")
    dump = project / "dump.jsonl"
    octomem(project, "export", str(dump))
    texts = {r.get("text") for r in map(json.loads, dump.read_text().splitlines())}
    assert {"user: na\ufffdve legacy file", "user: Which file holds the payments?",
            "Ana: cut emoji \ufffd here", "abstract \ufffd lone"} <= texts
    raw = dump.read_text().replace("\\ufffd", "\\udcef").replace("\ufffd", "\\udcef")
    assert raw.count("\\udcef") == 3
    (project / "again.jsonl").write_text(raw)
    octomem(project, "import", "again.jsonl", "--scope", "global")
    back = project / "back.jsonl"
    octomem(project, "export", str(back), "--scope", "global")
    assert {"user: na\ufffdve legacy file", "abstract \ufffd lone"} <= {
        r.get("text") for r in map(json.loads, back.read_text().splitlines())}


def live_session(path: Path, grown: bool) -> Path:
    """The assistant echoes a live key; with ``grown`` its reply goes on (a tool call
    without text, then more text: the same turn)."""
    records = [turn("u-1", None, "user", "Why do the payment tests fail?", 0),
               turn("a-1", "u-1", "assistant", "Your .env sets STRIPE_KEY=sk_live_51SECRET.", 3)]
    if grown:
        records += [record("a-2", "assistant", [{"type": "tool_use", "id": "t", "name": "Bash",
                                                 "input": {}}], 30, 5, "R", parentUuid="a-1"),
                    turn("a-3", "a-2", "assistant", "With a test key all 42 tests pass.", 7)]
    return write(path, records)


def stored_texts(memory: Memory) -> str:
    """Every current document's text, as recall could find it."""
    answer = memory.recall("STRIPE_KEY live key tests pass payment", top_k=20)
    return "\n".join(hit.chunk.text for hit in answer.hits)


def test_a_forgotten_turn_whose_reply_grew_stays_forgotten(memory: Memory,
                                                            tmp_path: Path) -> None:
    folder = tmp_path / "cc"
    folder.mkdir()
    live_session(folder / "s.jsonl", grown=False)
    memory.ingest(str(folder), fmt="claude-code")
    memory.forget("claude:a-1", reason="live key")
    live_session(folder / "s.jsonl", grown=True)
    _, report = memory.ingest(str(folder), fmt="claude-code")
    assert (report.added, report.renamed, report.skipped_forgotten) == ([], [], ["claude:a-1"])
    assert "sk_live_51SECRET" not in stored_texts(memory)
    _, back = memory.ingest(str(folder), fmt="claude-code", readd=True)
    assert back.added == ["claude:a-1"]  # the way back is still there


def test_a_session_forgotten_by_path_stays_forgotten_as_it_grows(memory: Memory,
                                                                 tmp_path: Path) -> None:
    folder = tmp_path / "cc"
    folder.mkdir()
    session = live_session(folder / "s.jsonl", grown=False)
    memory.ingest(str(folder), fmt="claude-code")
    _, forgot, _ = memory.forget_path(session, reason="live key") or (None, [], None)
    assert sorted(d.id for d in forgot) == ["claude:a-1", "claude:u-1"]
    live_session(session, grown=True)
    _, report = memory.ingest(str(folder), fmt="claude-code")
    assert report.added == [] and sorted(report.skipped_forgotten) == ["claude:a-1",
                                                                      "claude:u-1"]
    assert "sk_live_51SECRET" not in stored_texts(memory)


def secret_pair(folder: Path) -> tuple[Path, Path]:
    """Session A, where the user pasted a key and interrupted; B (sorting first) resumes it:
    A's records under B's session id, then a new question and its reply."""
    folder.mkdir()
    old = [turn("u-1", None, "user", "Which payment provider do we use?", 0),
           turn("a-1", "u-1", "assistant", "Adyen, since March.", 3),
           turn("u-2", "a-1", "user", "Use the Adyen API key AQEyhmfxSECRET to migrate.", 6),
           turn("u-3", "u-2", "user", "[Request interrupted by user]", 8)]
    a = write(folder / "b-session-a.jsonl", old)
    b = write(folder / "a-session-b.jsonl", [
        *({**r, "sessionId": "B"} for r in old),
        {**turn("u-4", "u-3", "user", "What is the refund limit per day?", 20), "sessionId": "B"},
        {**turn("a-4", "u-4", "assistant", "500 EUR per agent per day.", 25), "sessionId": "B"}])
    return a, b


def test_forgetting_a_session_forgets_its_turns_stored_from_a_resumed_copy(
        memory: Memory, tmp_path: Path, project: Path) -> None:
    a, _ = secret_pair(tmp_path / "cc")
    memory.ingest(str(tmp_path / "cc"), fmt="claude-code")
    found = memory.forget_path(a, reason="pasted a key")
    assert found is not None
    assert sorted(d.id for d in found[1]) == ["claude:a-1", "claude:u-1", "claude:u-2"]
    _, again = memory.ingest(str(tmp_path / "cc"), fmt="claude-code")
    assert (again.added, again.renamed) == ([], [])
    assert "AQEyhmfxSECRET" not in "\n".join(
        h.chunk.text for h in memory.recall("Adyen API key migrate", top_k=10).hits)
    assert {h.chunk.document_id for h in memory.recall("refund limit per day", top_k=2).hits} \
        == {"claude:u-4", "claude:a-4"}  # the resumed session's own turns stay


def test_forget_by_path_through_the_cli_names_the_resumed_session(project: Path) -> None:
    a, _ = secret_pair(project / "cc")
    octomem(project, "ingest", "--format", "claude-code", "cc")
    ran = octomem(project, "forget", str(a.relative_to(project)), "--reason", "pasted a key")
    assert "forgot 3 turns (1 transcript)" in ran.out, ran.out
    octomem(project, "ingest", "--format", "claude-code", "cc")
    assert "AQEyhmfxSECRET" not in octomem(project, "search", "Adyen API key", "-k", "5").out


def test_a_sessions_companion_folder_is_left_out_of_a_folder_ingest(project: Path) -> None:
    """Claude Code 2.1 keeps ``<session>/tool-results/*.txt`` (a tool's whole output) and
    ``<session>/subagents/`` beside ``<session>.jsonl``; a folder named like a chat
    transcript beside it is read as any folder."""
    folder = project / "cc"
    session = folder / "5f0c2a9e"
    (session / "tool-results").mkdir(parents=True)
    write(folder / "5f0c2a9e.jsonl", [turn("u-1", None, "user", "Show the refund log.", 0)])
    (session / "tool-results" / "toolu_01.txt").write_text(
        "\n".join(f"{i} INFO payments.refund id=R{i} status=ok" for i in range(300)))
    (folder / "trip").mkdir()
    (folder / "trip" / "plan.md").write_text("# Plan\n\nThe trip starts in Lisbon.\n")
    (folder / "trip.jsonl").write_text('{"speaker": "Ana", "text": "Lisbon first."}\n')
    ran = octomem(project, "ingest", "cc")
    assert "left out: 1 folder in the folders (cc/5f0c2a9e/ (Claude Code's folder of " \
        "5f0c2a9e.jsonl (saved tool outputs, sub-agents)))" in " ".join(ran.err.split())
    dump = project / "dump.jsonl"
    octomem(project, "export", str(dump))
    stored = [r for r in map(json.loads, dump.read_text().splitlines()) if "text" in r]
    assert sorted(r["text"][:20] for r in stored) == [
        "# Plan\n\nThe trip sta", "Ana: Lisbon first.", "user: Show the refun"]
    octomem(project, "ingest", "--include-ignored", "cc")
    octomem(project, "export", str(dump), "--force")
    assert "payments.refund" in dump.read_text()  # the way to read it after all
