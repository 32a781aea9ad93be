"""The session start over a memory without statements says what recall can search
(trial 17 G11: "Nothing is remembered yet" over 200 ingested notes and a Claude Code
session, so an agent had no reason to recall)."""

from __future__ import annotations

import json
from pathlib import Path

from cli_run import octomem
from mcp_stdio import stdio_client


def _store_documents_and_turns(project: Path) -> None:
    notes = project / "notes"
    notes.mkdir()
    for i in range(3):
        (notes / f"n{i}.md").write_text(f"# Note {i}\nThe ledger worker restarts at {i}:00.\n")
    chat = project / "chat.jsonl"
    chat.write_text("".join(json.dumps({"speaker": s, "text": t, "session": "1"}) + "\n" for s, t in
                            [("Ana", "Did you book the train?"), ("Ben", "Yes, the 9:09.")]))
    octomem(project, "ingest", "notes")
    octomem(project, "ingest", "chat.jsonl")


def test_cli_session_start_counts_documents_and_turns_per_scope(tmp_path: Path) -> None:
    _store_documents_and_turns(tmp_path)
    (tmp_path / "prefs.md").write_text("# Prefs\nThe user likes short answers.\n")
    octomem(tmp_path, "ingest", "--scope", "global", "prefs.md")
    out = octomem(tmp_path, "session-start").out
    assert ("No statements yet; stored for `recall` to search: 1 ingested document in the "
            "global scope; 3 ingested documents and 2 conversation turns in the local scope. "
            "`remember` rules") in " ".join(out.split()), out
    assert "Nothing is remembered yet" not in out
    octomem(tmp_path, "add", "Never push to main", "--kind", "RULE")
    out = octomem(tmp_path, "session-start").out
    assert "## Standing rules and preferences" in out and "No statements yet" not in out


def test_mcp_session_start_counts_them_too(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    _store_documents_and_turns(project)
    with stdio_client(tmp_path, project) as client:
        text = client.read("octomem://session-start")
    assert "No statements yet; stored for `recall` to search: 3 ingested documents and 2 " \
        "conversation turns in the local scope." in " ".join(text.split()), text


def test_with_statements_the_page_still_says_what_recall_searches_besides(
        tmp_path: Path) -> None:
    # statements shown, and the documents and turns counted above them, within even the
    # smallest budget (the line comes before the statements that fill the page)
    _store_documents_and_turns(tmp_path)
    for i in range(30):
        octomem(tmp_path, "add", f"Decision {i}: the ledger worker keeps its queue in Redis "
                "streams, not in PostgreSQL, to keep writes off the primary.")
    octomem(tmp_path, "add", "Never push to main", "--kind", "RULE")
    for budget in (512, 8192):
        out = octomem(tmp_path, "--set", f"session_start.max_bytes={budget}",
                      "session-start").out
        assert len(out.encode()) <= budget
        assert out.splitlines()[2] == (
            "_Also stored, not listed here: 3 ingested documents and 2 conversation turns in "
            "the local scope; `recall` searches them with the statements._"), out
        assert "- **RULE** Never push to main" in out
