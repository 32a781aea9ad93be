"""Findings of a fresh user's trial (trial 18, 2026-12-03) on Claude Code sessions.

- H1: a session that ended on a user message (interrupted with ESC, or a background
  task's notice) and was resumed (``claude --resume`` writes a new file repeating the old
  records) merged that message with the resumed session's first one into one turn under
  the old record's id; the two files then rewrote that turn in turn on every folder
  ingest (a new revision each time, forever), and the user's new words were current only
  when the resumed file sorted last.
- H2: what Claude Code records besides the user's typed words and the assistant's
  replies was stored as theirs: a ``!`` shell command with its whole output, a
  background task's notice, an API error record, the "No response requested." placeholder.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_run import octomem
from mcp_stdio import stdio_client

from octomem.engine.memory.facade import Memory
from octomem.engine.memory.transcripts import read_chat, read_claude_code


def record(uuid: str, role: str, content: object, day: int, second: int,
           session: str, **extra: object) -> dict[str, object]:
    return {"type": role, "uuid": uuid, "sessionId": session, "cwd": "/work/shop",
            "timestamp": f"2026-11-{day:02d}T09:00:{second:02d}.000Z",
            "message": {"role": role, "content": content}, **extra}


def write(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def resumed_pair(folder: Path) -> tuple[Path, Path]:
    """Session A ends on a question the user interrupted; B (sorting first) is A resumed:
    A's records under B's session id, then the user's new question and its reply."""
    folder.mkdir()
    old = [record("u-1", "user", "Which payment provider do we use for refunds?", 28, 0, "A"),
           record("a-1", "assistant", [{"type": "text", "text": "Adyen, since March."}],
                  28, 5, "A"),
           record("u-2", "user", "Can you migrate the refund webhook to Adyen's new endpoint?",
                  28, 9, "A"),
           record("u-3", "user", [{"type": "text", "text": "[Request interrupted by user]"}],
                  28, 12, "A")]
    a = write(folder / "b-session-a.jsonl", old)
    b = write(folder / "a-session-b.jsonl", [
        *({**r, "sessionId": "B"} for r in old),
        record("u-4", "user", "First tell me: what is the refund limit per day for support?",
               29, 0, "B"),
        record("a-4", "assistant", [{"type": "text", "text": "500 EUR per agent per day."}],
               29, 6, "B")])
    return a, b


def test_a_user_record_is_a_turn_of_its_own(tmp_path: Path) -> None:
    _, b = resumed_pair(tmp_path / "cc")
    assert [(t.id, t.text) for t in read_claude_code(b)] == [
        ("claude:u-1", "user: Which payment provider do we use for refunds?"),
        ("claude:a-1", "assistant: Adyen, since March."),
        ("claude:u-2", "user: Can you migrate the refund webhook to Adyen's new endpoint?"),
        ("claude:u-4", "user: First tell me: what is the refund limit per day for support?"),
        ("claude:a-4", "assistant: 500 EUR per agent per day."),
    ]


def test_a_resumed_session_ingested_again_changes_nothing(memory: Memory,
                                                           tmp_path: Path) -> None:
    resumed_pair(tmp_path / "cc")
    _, first = memory.ingest(str(tmp_path / "cc"), fmt="claude-code")
    assert sorted(first.added) == ["claude:a-1", "claude:a-4", "claude:u-1", "claude:u-2",
                                   "claude:u-4"]
    for _ in range(2):
        _, again = memory.ingest(str(tmp_path / "cc"), fmt="claude-code")
        assert (again.added, again.replaced) == ([], [])
        assert len(again.unchanged) == 8  # B's five turns, then A's three again
    answer = memory.recall("500 EUR per agent per day", top_k=1, context=1)
    top = answer.hits[0]
    assert top.chunk.document_id == "claude:a-4"
    assert [(t.chunk.document_id, t.offset) for t in answer.context[(top.scope, top.chunk.id)]] \
        == [("claude:u-4", -1)]  # the question it answers, in place


def test_a_turn_two_files_hold_with_two_texts_is_stored_apart(memory: Memory,
                                                              tmp_path: Path) -> None:
    """A reply cut off in one file and whole in its resumed copy: the same first record,
    two texts. Each file's version stays; nothing is rewritten on the next ingest."""
    folder = tmp_path / "cc"
    folder.mkdir()
    cut = [record("u-1", "user", "How do we round cart totals?", 28, 0, "A"),
           record("a-1", "assistant", [{"type": "text", "text": "In integer cents."}], 28, 4, "A")]
    write(folder / "a.jsonl", cut)
    write(folder / "b.jsonl", [*({**r, "sessionId": "B"} for r in cut),
                               record("a-2", "assistant", [{"type": "text",
                                      "text": "Formatted only at the edge."}], 29, 0, "B")])
    _, first = memory.ingest(str(folder), fmt="claude-code")
    assert sorted(first.added) == ["claude:a-1", "claude:a-1@b", "claude:u-1"]
    _, again = memory.ingest(str(folder), fmt="claude-code")
    assert (again.added, again.replaced) == ([], [])
    texts = {doc.id: doc.text for doc in (memory.find(i)[0][1] for i in first.added)}
    assert texts == {"claude:u-1": "user: How do we round cart totals?",
                     "claude:a-1": "assistant: In integer cents.",
                     "claude:a-1@b": "assistant: In integer cents.\n\nFormatted only at the edge."}


def test_what_claude_code_adds_is_not_the_users_or_the_assistants_words(
        tmp_path: Path) -> None:
    session = write(tmp_path / "s.jsonl", [
        record("u-1", "user", "<bash-input>git log --oneline -1</bash-input>", 28, 0, "S"),
        record("u-2", "user", "<bash-stdout>e1f2a3b fix cart rounding</bash-stdout>"
                              "<bash-stderr></bash-stderr>", 28, 1, "S"),
        record("u-3", "user", "Why does the cart total show 19.999?", 28, 2, "S"),
        record("a-3", "assistant", [{"type": "text", "text": "It sums floats."}], 28, 4, "S"),
        record("a-4", "assistant", [{"type": "text", "text": 'API Error: 529 {"type":"error"}'}],
               28, 5, "S", isApiErrorMessage=True),
        record("u-5", "user", "<task-notification><task-id>b1</task-id><status>completed"
                              "</status></task-notification>", 28, 7, "S"),
        record("u-6", "user", "Where are webhook payloads parsed?", 28, 8, "S"),
        record("a-6", "assistant", [{"type": "text", "text": "In shop/webhooks/parse.py."}],
               28, 9, "S"),
        record("a-7", "assistant", [{"type": "text", "text": "No response requested."}],
               28, 10, "S"),
    ])
    assert [(t.id, t.text) for t in read_claude_code(session)] == [
        ("claude:u-3", "user: Why does the cart total show 19.999?"),
        ("claude:a-3", "assistant: It sums floats."),
        ("claude:u-6", "user: Where are webhook payloads parsed?"),
        ("claude:a-6", "assistant: In shop/webhooks/parse.py."),
    ]


def test_an_impossible_front_matter_date_skips_that_note_alone(project: Path) -> None:
    """H5: PyYAML raised ``ValueError`` for ``date: 2024-02-30``: a traceback, and no note
    of the folder stored."""
    notes = project / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("---\ntitle: Release process\n---\n\nReleases are cut "
                                "from the release branch every Thursday.\n")
    (notes / "c.md").write_text("---\ntitle: Backups\ndate: 2024-02-30\n---\n\nBackups run "
                                "nightly at 02:00 to the NAS.\n")
    (notes / "d.md").write_text("---\ntitle: Freeze\ndate: 2024-02-29 18:00:00\n---\n\n"
                                "Deploys freeze from 18:00.\n")
    ran = octomem(project, "ingest", "notes", ok=False)
    assert ran.code == 1
    assert "skipped: notes/c.md: front matter date: '2024-02-30' is not an ISO-8601 date " \
        "or time; use e.g. 2025-03-01 or 2025-03-01T14:30:00Z" in ran.err
    assert "Traceback" not in ran.err
    assert "added 2, replaced 0, unchanged 0 documents" in ran.out
    found = json.loads(octomem(project, "search", "when do deploys freeze?", "--json").out)
    assert (found["hits"][0]["title"], found["hits"][0]["event_time"]) == (
        "Freeze", "2024-02-29T18:00:00+00:00")  # a YAML timestamp with a time still reads


def test_texts_saved_under_one_title_are_documents_of_their_own(tmp_path: Path) -> None:
    """H4: the second text an agent ingested under the title "Standup notes" superseded
    the first, which then dropped out of recall; a ``uri`` is what revises a text."""
    project = tmp_path / "project"
    project.mkdir()
    with stdio_client(tmp_path, project) as client:
        first = client.ok("ingest", path_or_text="Standup 1 Dec: Ana will rotate the Vault "
                          "root token on Friday.", title="Standup notes")
        second = client.ok("ingest", path_or_text="Standup 2 Dec: the staging database "
                           "moves to Postgres 16 next week.", title="Standup notes")
        assert (first["counts"]["added"], second["counts"]["added"],
                second["counts"]["revised"]) == (1, 1, 0)
        hits = client.ok("recall", query="who rotates the Vault root token?")["hits"]
        assert hits[0]["text"].startswith("Standup 1 Dec: Ana will rotate")
        client.ok("ingest", path_or_text="Deploys: tag, build.", uri="wiki:deploys")
        revised = client.ok("ingest", path_or_text="Deploys: tag, build, sign.",
                            uri="wiki:deploys")
        assert (revised["counts"]["added"], revised["counts"]["revised"]) == (0, 1)


def test_a_folder_moved_with_its_project_is_the_same_folder(tmp_path: Path) -> None:
    """H3: after ``mv src/shop code/shop`` (its ``.octomem/`` moving along) every file was
    stored again under its new path and the old copies stayed current beside them."""
    old = tmp_path / "src" / "shop"
    (old / ".octomem").mkdir(parents=True)
    (old / "docs" / "ops").mkdir(parents=True)
    (old / "docs" / "errors.md").write_text("# Errors\n\nKST-417 means a checksum mismatch.\n")
    (old / "docs" / "ops" / "backups.md").write_text("# Backups\n\nBackups run at 02:00.\n")
    (old / "docs" / "gone.md").write_text("# Gone\n\nThe fax gateway answers on port 9.\n")
    (tmp_path / "src" / "elsewhere" / "docs").mkdir(parents=True)  # a folder of the same
    other = tmp_path / "src" / "elsewhere" / "docs" / "errors.md"   # name, still there
    other.write_text("# Other\n\nKST-417 is a parking bay.\n")
    octomem(old, "ingest", "docs", str(other))
    (old / "docs" / "gone.md").unlink()  # deleted, then the project moved
    new = tmp_path / "code" / "shop"
    new.parent.mkdir()
    old.rename(new)
    (new / "docs" / "errors.md").write_text("# Errors\n\nKST-417 is retired: see KST-999.\n")
    ran = octomem(new, "ingest", "docs")
    assert ran.out.startswith("added 2, replaced 0, unchanged 0 documents")
    assert f"moved: 2 files from {old / 'docs'} to docs: forgot the documents read from " \
        "the old place (the files are stored from the new one)" in ran.out
    assert "gone: " in ran.out and "gone.md: forgot its document file:" in ran.out
    found = json.loads(octomem(new, "search", "what does KST-417 mean?", "--json").out)
    assert sorted(h["uri"] for h in found["hits"]) == sorted(
        [(new / "docs" / "errors.md").as_uri(), other.as_uri()])
    status = json.loads(octomem(new, "status", "--json").out)
    assert status["scopes"]["local"]["current"] == 3  # errors, backups, the other folder's


def test_a_projects_own_config_cannot_widen_what_the_mcp_ingest_reads(tmp_path: Path) -> None:
    """H8: a cloned repository's committed ``.octomem/config.toml`` with ``allowed_roots =
    ["/"]`` let the agent ingest the user's private files."""
    project = tmp_path / "project"
    (project / ".octomem").mkdir(parents=True)
    (project / ".octomem" / "config.toml").write_text(
        f'data_dir = "{tmp_path / "elsewhere"}"\n[ingest]\nallowed_roots = ["/"]\n')
    private = tmp_path / "private" / "passwords.txt"
    private.parent.mkdir()
    private.write_text("Bank login: me@example.com / pw Tr0ub4dor-99\n")
    shown = octomem(project, "config", "ingest.allowed_roots", spawn=True)  # real stderr
    assert "ingest.allowed_roots = []  runtime · default" in shown.out
    assert (f"{project / '.octomem' / 'config.toml'} sets ingest.allowed_roots: ignored (a "
            "project's own config may not; put it in") in shown.err
    assert "sets data_dir: ignored" in shown.err
    with stdio_client(tmp_path, project) as client:
        refused = client.error("ingest", path_or_text=str(private))
        assert f"path_or_text: {private} is outside the project root and " \
            "ingest.allowed_roots" in refused
        assert client.ok("recall", query="bank login password")["hits"] == []


def test_ids_another_source_holds_are_stored_apart(project: Path) -> None:
    """H6: a second BEIR corpus numbering its rows as the first did, a chat line's own
    ``id`` and a row whose ``_id`` was a statement's each replaced what the store held."""
    for name, rows in (("beirA", [("1", "Vitamin D supplementation improves bone density."),
                                  ("2", "Statins reduce LDL cholesterol.")]),
                       ("beirB", [("1", "ACME revenue grew 12 percent in Q1.")])):
        (project / name).mkdir()
        (project / name / "corpus.jsonl").write_text("".join(
            json.dumps({"_id": i, "text": t}) + "\n" for i, t in rows))
        octomem(project, "ingest", "--beir", name)
    (project / "chat.jsonl").write_text(json.dumps({"id": "2", "speaker": "Ana",
                                                    "text": "Lunch at noon?"}) + "\n")
    octomem(project, "ingest", "chat.jsonl")
    rule = json.loads(octomem(project, "add", "Production deploys need two approvals.",
                              "--kind", "RULE", "--json").out)["id"]
    (project / "beirC").mkdir()
    (project / "beirC" / "corpus.jsonl").write_text(json.dumps(
        {"_id": rule, "text": "Deploys need no approval at all."}) + "\n")
    octomem(project, "ingest", "--beir", "beirC")
    again = octomem(project, "ingest", "--beir", "beirB")  # its own rows: found again
    assert again.out.startswith("added 0, replaced 0, unchanged 1 document;")
    exported = [json.loads(line) for line in octomem(project, "export", "-").out.splitlines()]
    stored = {d["id"]: (d["kind"], d["revision"], d["text"]) for d in exported
              if d.get("type") == "document"}
    assert stored == {
        "1": ("DOC", 1, "Vitamin D supplementation improves bone density."),
        "2": ("DOC", 1, "Statins reduce LDL cholesterol."),
        "1@beirB": ("DOC", 1, "ACME revenue grew 12 percent in Q1."),
        "2@chat": ("TURN", 1, "Ana: Lunch at noon?"),
        rule: ("RULE", 1, "Production deploys need two approvals."),
        f"{rule}@beirC": ("DOC", 1, "Deploys need no approval at all."),
    }


def test_a_system_line_of_a_chat_export_is_left_out_with_a_note(tmp_path: Path) -> None:
    """H12: ``{"role": "system", ...}``, the first line of OpenAI-style exports, failed the
    whole transcript (``role must be 'user' or 'assistant'``)."""
    chat = tmp_path / "sys.jsonl"
    chat.write_text("".join(json.dumps(line) + "\n" for line in [
        {"role": "system", "text": "You are a helpful assistant."},
        {"role": "user", "text": "Where is the VPN config?"},
        {"role": "tool", "text": "{\"files\": 3}"},
        {"role": "assistant", "text": "In /etc/wireguard/wg0.conf."}]))
    notes: list[str] = []
    turns = read_chat(chat, notes)
    assert [(t.id, t.text) for t in turns] == [
        ("sys:0", "user: Where is the VPN config?"),
        ("sys:1", "assistant: In /etc/wireguard/wg0.conf.")]
    assert notes == [f"{chat}: 2 lines of the system's instructions left out (role system, "
                     "developer or tool: lines 1, 3)"]
