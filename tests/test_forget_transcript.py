"""Trial 16 F19: a whole transcript could not be forgotten at once (``forget PATH`` was
refused, every turn had to be forgotten by id: 300 calls for a 300-turn chat). Now
``forget PATH`` (the CLI, and the MCP tool given the path) forgets every turn of it in one
transaction, each tombstoned as ``forget ID`` would, so an ingest of the file keeps them
out until ``--readd``. Real SQLite stores; the CLI in process; a real MCP client over stdio."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_run import octomem
from mcp_stdio import stdio_client


def _chat(path: Path, n: int) -> None:
    path.write_text("".join(json.dumps({
        "speaker": "user" if i % 2 == 0 else "assistant",
        "text": f"message {i} about the secret project bluebird"}) + "\n" for i in range(n)),
        encoding="utf-8")


def test_forget_a_transcripts_path_forgets_every_turn_and_keeps_them_out(
        project: Path) -> None:
    _chat(project / "long.jsonl", 30)
    octomem(project, "ingest", "long.jsonl")
    octomem(project, "add", "The bluebird launch is on Friday", "--kind", "FACT")
    done = octomem(project, "forget", "long.jsonl", "--reason", "pasted a credential")
    said = " ".join(done.out.split())
    assert said.startswith("forgot the 30 turns of long.jsonl from the local scope "
                           "(long:0, long:1, long:2, ...)"), said
    hits = octomem(project, "search", "secret project bluebird", "--json").json()["hits"]
    assert all(h["kind"] != "TURN" for h in hits), hits
    status = octomem(project, "status", "--json").json()["scopes"]["local"]
    assert status["current"] == 1 and status["forgotten"] == 30, status
    again = octomem(project, "ingest", "long.jsonl", ok=False)  # kept out, as forget ID does
    assert "30 forgotten, not re-added" in again.out + again.err, (again.out, again.err)
    assert octomem(project, "status", "--json").json()["scopes"]["local"]["current"] == 1
    gone = octomem(project, "forget", "long.jsonl", ok=False)  # nothing of it left
    assert gone.code == 1 and "'long.jsonl'" in gone.err, gone.err
    octomem(project, "ingest", "--readd", "long.jsonl")
    assert octomem(project, "status", "--json").json()["scopes"]["local"]["current"] == 31


def test_forget_json_lists_every_turn(project: Path) -> None:
    _chat(project / "c.jsonl", 4)
    octomem(project, "ingest", "c.jsonl")
    out = octomem(project, "forget", "c.jsonl", "--json").json()  # the MCP tool's shape
    assert (out["turns_forgotten"], out["turns"]) == (4, ["c:0", "c:1", "c:2", "c:3"]), out
    assert out["message"].startswith("forgot the 4 turns of c.jsonl from the local scope")


@pytest.mark.slow
def test_the_mcp_forget_tool_takes_a_transcripts_path(tmp_path: Path, project: Path) -> None:
    _chat(project / "long.jsonl", 25)
    with stdio_client(tmp_path, project) as mcp:
        assert mcp.ok("ingest", path_or_text="long.jsonl")["counts"]["added"] == 25
        out = mcp.ok("forget", text_or_id="long.jsonl", reason="privacy")
        assert out["turns_forgotten"] == 25 and out["turns"][:2] == ["long:0", "long:1"]
        assert len(out["turns"]) == 10 and out["forgotten"] is None, out
        assert out["message"].startswith("forgot the 25 turns of long.jsonl from the local")
        assert not mcp.ok("recall", query="secret project bluebird")["hits"]
        again = mcp.ok("ingest", path_or_text="long.jsonl")
        assert again["counts"]["added"] == 0 and again["counts"]["forgotten_not_readded"] == 25
        assert "long.jsonl" in mcp.error("forget", text_or_id="long.jsonl")


@pytest.mark.slow
def test_a_text_that_cannot_be_a_path_is_not_found_not_a_crash(tmp_path: Path,
                                                                 project: Path) -> None:
    with stdio_client(tmp_path, project) as mcp:
        mcp.ok("remember", text="The ferry leaves at nine")
        for key in ("a/\x00b.jsonl", "~nosuchuser12/chat.jsonl", "x" * 5000 + "/y.jsonl"):
            message = mcp.error("forget", text_or_id=key)
            assert "has the id or exact text" in message, message
