"""The exact text of a current statement is not stored twice in its scope: ``add`` and
MCP ``remember`` answer with the stored statement (``already_stored``), so ``forget`` by
the exact text works (fresh-user trial 3, finding 6). Near duplicates are still stored
and listed; ``supersedes`` still writes."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest
from cli_run import octomem
from mcp import Client

from octomem.engine.memory.facade import Memory
from octomem.mcp_server.server import create_server
from octomem.plugins.sqlite.rows import DOC_TEXT


def _rows(path: Path, text: str) -> list[tuple[str, str]]:
    # apsw, octomem's own SQLite: a second SQLite library in this process (the stdlib's)
    # would drop octomem's POSIX locks on the file when it closes (SQLite's "howtocorrupt")
    conn = apsw.Connection(str(path))
    try:  # a one-chunk statement's text is in its chunk
        return [tuple(r) for r in conn.execute(
            f"SELECT id, kind FROM documents WHERE {DOC_TEXT} = ? ORDER BY id", (text,))]
    finally:
        conn.close()


def test_the_same_statement_is_stored_once_per_scope_whatever_the_kind(memory: Memory,
                                                              tmp_path: Path) -> None:
    text = "Tests run with make check"
    first = memory.remember(text, kind="FACT", tags=["ci"])
    again = memory.remember(text, kind="FACT", tags=["other"])
    assert not first.already_stored and again.already_stored
    assert again.document.id == first.document.id and again.embedded
    assert again.document.tags == ("ci",) and again.near_duplicates == []
    local = tmp_path / "project" / ".octomem" / "octomem.sqlite3"
    assert _rows(local, text) == [(first.document.id, "FACT")]
    rule = memory.remember(text, kind="RULE")  # another kind: still the same statement
    assert rule.already_stored and rule.document.id == first.document.id
    assert rule.document.kind == "FACT" and rule.asked_kind == "RULE"
    glob = memory.remember(text, kind="FACT", scope="global")  # another scope: stored
    dated = memory.remember(text, kind="FACT", event_time="2024-05-01")  # another event
    assert not (glob.already_stored or dated.already_stored)
    assert len(_rows(local, text)) == 2
    assert memory.remember(text, kind="FACT", event_time="2024-05-01").document.id \
        == dated.document.id


def test_supersedes_with_the_same_text_still_writes(memory: Memory) -> None:
    old = memory.remember("The database is PostgreSQL 13", kind="FACT",
                          event_time="2023-01-01")
    new = memory.remember("The database is PostgreSQL 16", kind="FACT",
                          supersedes=old.document.id, event_time="2024-01-01")
    assert not new.already_stored and new.superseded is not None
    back = memory.remember("The database is PostgreSQL 13", kind="FACT",
                           event_time="2023-01-01")  # the old one is history now
    assert not back.already_stored and back.document.id != old.document.id


def test_add_twice_then_forget_by_text(tmp_path: Path) -> None:
    text = "Tests run with make check"
    first = octomem(tmp_path, "add", text, "--kind", "FACT", "--json").json()
    second = octomem(tmp_path, "add", text, "--kind", "FACT")
    assert second.out.splitlines() == [
        f"already stored: {first['id']} in the local scope has this text; nothing new was "
        "stored"]
    again = octomem(tmp_path, "add", text, "--kind", "FACT", "--json").json()
    assert again["already_stored"] is True and again["id"] == first["id"]
    gone = octomem(tmp_path, "forget", text)
    assert gone.out.startswith(f"forgot {first['id']} from the local scope")
    assert "no hits" in octomem(tmp_path, "search", "make check").out


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_mcp_remember_twice_answers_the_stored_statement(data_dir: Path) -> None:
    server = create_server(overrides={"data_dir": str(data_dir),
                                      "pipeline": {"embedder": "hashing"}})
    async with Client(server) as client:
        args = {"text": "Run the linter before every commit", "kind": "RULE"}
        first = (await client.call_tool("remember", args)).structured_content
        second = (await client.call_tool("remember", args)).structured_content
        assert first["already_stored"] is False and second["already_stored"] is True
        assert second["id"] == first["id"] and second["near_duplicates"] == []
        assert second["message"] is None
        plain = (await client.call_tool("remember", {"text": args["text"]})).structured_content
        assert plain["already_stored"] is True and plain["kind"] == "RULE"
        assert plain["message"] is None  # no kind asked: nothing to say about it (trial 9)
        other = (await client.call_tool("remember", {**args, "kind": "FACT"})).structured_content
        assert other["already_stored"] is True and other["id"] == first["id"]
        assert other["kind"] == "RULE" and other["message"] == (
            f"already stored as RULE, not FACT; to make it FACT: remember it again with kind "
            f"FACT and supersedes {first['id']}")
        gone = (await client.call_tool("forget", {"text_or_id": args["text"]}))
        assert gone.structured_content["forgotten"]["id"] == first["id"]


def test_add_with_another_kind_says_how_to_change_it_and_forget_by_text_works(
        tmp_path: Path) -> None:
    """Trial 7, #4: the same text with another kind was stored a second time, and forget
    by the exact text then refused (two matches)."""
    text = "The user prefers tabs for indentation"
    first = octomem(tmp_path, "add", text, "--kind", "PREFERENCE", "--scope", "global",
                    "--json").json()
    again = octomem(tmp_path, "add", text, "--kind", "RULE", "--scope", "global")
    assert again.out.splitlines() == [
        f"already stored: {first['id']} in the global scope has this text; nothing new was "
        "stored",
        f"already stored as PREFERENCE, not RULE; to make it RULE: octomem add TEXT --kind "
        f"RULE --supersedes {first['id']}"]
    plain = octomem(tmp_path, "add", text, "--scope", "global")  # no --kind: no advice on it
    assert plain.out.splitlines() == [
        f"already stored: {first['id']} in the global scope has this text; nothing new was "
        "stored"]
    assert octomem(tmp_path, "add", "A new plain statement", "--json").json()["kind"] == "ITEM"
    gone = octomem(tmp_path, "forget", text)
    assert gone.out.startswith(f"forgot {first['id']} from the global scope")
    first = octomem(tmp_path, "add", text, "--kind", "PREFERENCE", "--json").json()
    changed = octomem(tmp_path, "add", text, "--kind", "RULE", "--supersedes", first["id"],
                      "--json").json()  # what the hint says does what it says
    assert changed["kind"] == "RULE" and changed["scope"] == "local"
    assert changed["superseded"]["id"] == first["id"] and not changed["already_stored"]


def test_a_handoff_is_not_taken_for_a_statement_with_its_text(memory: Memory) -> None:
    note = memory.remember("Continue with the parser tests", kind="TODO")
    handoff = memory.remember("Continue with the parser tests", kind="HANDOFF")
    assert not handoff.already_stored and handoff.document.id != note.document.id
    assert memory.remember("Continue with the parser tests", kind="FACT").already_stored


def test_forgetting_a_forgotten_text_says_it_was_forgotten(tmp_path: Path) -> None:
    """Trial 7, #17: the second forget of the same text said nothing had it."""
    text = "Tests run with make check"
    first = octomem(tmp_path, "add", text, "--json").json()
    octomem(tmp_path, "forget", text, "--reason", "moved to CI")
    again = octomem(tmp_path, "forget", text, ok=False)
    assert again.code == 1
    line = again.err.strip()
    assert line.startswith(f"error: the statement with this text ({first['id']}) was already "
                           "forgotten from the local scope on ")
    assert line.endswith(": moved to CI")
    by_id = octomem(tmp_path, "forget", first["id"], ok=False).err.strip()
    assert by_id.startswith(f"error: '{first['id']}' was already forgotten from the local scope")
