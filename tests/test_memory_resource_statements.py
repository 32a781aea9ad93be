"""Trial 16 F26: ``octomem://memory/{scope}`` gave its 500 places to ingested files, so the
project's own statements (facts, decisions) were left out, the one with the newest event
time too. Statements are listed first, newest first by when each happened; ingested
documents and turns are counted, not listed. A real SQLite store; the resource read over
MCP stdio as a client reads it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp_stdio import stdio_client

from octomem.engine.memory import view
from octomem.engine.memory.facade import open_memory


def test_statements_are_listed_before_files_newest_event_first(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "docs").mkdir()
    for i in range(6):
        (project / "docs" / f"n{i}.md").write_text(f"Note {i} about the lighthouse rota\n")
    (project / "chat.jsonl").write_text("".join(
        json.dumps({"speaker": "Ana", "text": f"Turn {i} about the ferry"}) + "\n"
        for i in range(4)), encoding="utf-8")
    memory = open_memory(overrides={"pipeline": {"embedder": "hashing"}},
                         project_root=project, global_root=project.parent / "global")
    try:
        memory.remember("Production database is PostgreSQL 16.3", kind="FACT",
                        event_time="2026-12-25")  # recorded first, happened last
        memory.ingest(str(project / "docs"))
        memory.ingest(str(project / "chat.jsonl"))
        for i in range(3):
            memory.remember(f"Fact {i}: the ferry leaves at {9 + i}", kind="FACT",
                            event_time=f"2025-01-0{i + 1}")
        memory.remember("Releases go out on Thursdays", kind="DECISION")
        monkeypatch.setattr(view, "LISTED_STATEMENTS", 3)
        text = view.scope_markdown(memory, "local")
    finally:
        memory.close()
    assert "Not listed here: 6 ingested documents (recall finds them) and 4 conversation " \
        "turns (recall finds them) and 2 older statements" in text, text
    assert "PostgreSQL 16.3" in text and "Thursdays" in text, text
    assert "## DOC" not in text and "lighthouse" not in text and "## TURN" not in text
    # newest by when it happened: 2026-12-25, then today's decision, then 2025-01-03
    assert [n for n in range(3) if f"Fact {n}:" in text] == [2]
    assert text.index("PostgreSQL 16.3") < text.index("Fact 2:")


@pytest.mark.slow
def test_the_resource_over_mcp_lists_the_statements_beside_many_files(
        tmp_path: Path, project: Path) -> None:
    (project / "docs").mkdir()
    for i in range(40):
        (project / "docs" / f"n{i:02}.md").write_text(f"Note {i} about the lighthouse rota\n")
    with stdio_client(tmp_path, project) as mcp:
        mcp.ok("remember", text="Production database is PostgreSQL 16.3", kind="FACT",
               event_time="2026-12-25")
        mcp.ok("remember", text="Releases go out on Thursdays", kind="DECISION")
        assert mcp.ok("ingest", path_or_text="docs")["counts"]["added"] == 40
        text = mcp.read("octomem://memory/local")
    assert "2 current statements" in text and "40 ingested documents" in text, text
    assert "PostgreSQL 16.3" in text and "Thursdays" in text and "lighthouse" not in text
