"""Trial 17's small findings (a fresh user's break-it pass), and these fixes:

- G16: after ``forget`` of a whole transcript, every later ingest printed one
  ``not re-added:`` line per turn (300 lines for a 150-exchange session): now one line
  per transcript, counting its turns;
- G15: ``--tag billing,api`` was stored as the one tag ``billing,api``, silently: a comma
  in a tag is refused on input (writes and filters, CLI and MCP), naming the repeatable
  ``--tag``.

Real SQLite stores; the CLI in process; a real MCP client over stdio.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_run import octomem
from mcp_stdio import stdio_client


def _chat(path: Path, n: int) -> None:
    path.write_text("".join(json.dumps({
        "speaker": "user" if i % 2 == 0 else "assistant",
        "text": f"message {i} about the heron project"}) + "\n" for i in range(n)),
        encoding="utf-8")


def test_a_forgotten_transcript_is_one_line_of_a_later_ingest(project: Path) -> None:
    (project / "chats").mkdir()
    _chat(project / "chats" / "long.jsonl", 40)
    _chat(project / "chats" / "one.jsonl", 3)
    octomem(project, "ingest", "chats")
    octomem(project, "forget", "chats/long.jsonl")
    octomem(project, "forget", "one:1")
    again = octomem(project, "ingest", "chats")
    lines = [ln for ln in (again.out + again.err).splitlines() if ln.startswith("not re-")]
    assert len(lines) == 2, lines  # was 41: one per turn
    long_line = next(ln for ln in lines if "long.jsonl" in ln)
    assert long_line.startswith("not re-added: chats/long.jsonl: 40 forgotten turns "
                                "(forgotten 20"), long_line
    assert long_line.endswith("; --readd stores them again"), long_line
    one_line = next(ln for ln in lines if "one.jsonl" in ln)  # a single turn: named
    assert one_line.startswith("not re-added: chats/one.jsonl: turn one:1 (forgotten"), one_line


@pytest.mark.slow
def test_the_mcp_ingest_names_a_forgotten_transcript_once(tmp_path: Path, project: Path) -> None:
    _chat(project / "long.jsonl", 30)
    with stdio_client(tmp_path, project) as mcp:
        mcp.ok("ingest", path_or_text="long.jsonl")
        assert mcp.ok("forget", text_or_id="long.jsonl")["turns_forgotten"] == 30
        notes = mcp.ok("ingest", path_or_text="long.jsonl")["forgotten_left_out"]
        assert len(notes) == 1 and notes[0].startswith("not re-added: "), notes
        assert f"{project / 'long.jsonl'}: 30 forgotten turns (forgotten 20" in notes[0], notes
        assert notes[0].endswith("; readd: true stores them again"), notes


def test_a_comma_in_a_tag_is_refused_naming_the_repeatable_tag(project: Path) -> None:
    added = octomem(project, "add", "Invoices are sent monthly", "--tag", "billing,api",
                    ok=False)
    said = " ".join(added.err.split())
    assert added.code != 0 and "'billing,api' holds a comma" in said, said
    assert "--tag billing --tag api" in said and "nothing was stored" in said, said
    assert "none yet" in octomem(project, "status").out  # nothing stored, no store made
    octomem(project, "add", "Invoices are sent monthly", "--tag", "billing", "--tag", "api")
    found = octomem(project, "search", "invoices", "--tag", "billing,api", ok=False)
    assert found.code != 0 and "holds a comma" in found.err, found.err
    hits = octomem(project, "search", "invoices", "--tag", "api", "--json").json()["hits"]
    assert hits and set(hits[0]["tags"]) == {"billing", "api"}, hits


@pytest.mark.slow
def test_the_mcp_tools_refuse_a_comma_in_a_tag(tmp_path: Path, project: Path) -> None:
    with stdio_client(tmp_path, project) as mcp:
        said = mcp.error("remember", text="Invoices are sent monthly", tags=["billing,api"])
        assert "holds a comma" in said and '["billing", "api"]' in said, said
        said = mcp.error("ingest", path_or_text="Refunds take five days to settle.",
                         tags=["a,b"])
        assert "holds a comma" in said, said
        mcp.ok("remember", text="Invoices are sent monthly", tags=["billing"])
        assert "holds a comma" in mcp.error("recall", query="invoices", tags=["billing,x"])
        assert mcp.ok("recall", query="invoices", tags=["billing"])["hits"]
