"""Trial 13, findings 1 and 3, on a real SQLite store (CLI, engine and MCP over stdio): a
forgotten turn's tombstone follows its text, not its position; a forgotten file is named
when it is left out, a named one fails the ingest, and ``--readd`` lets it back."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from cli_run import octomem
from mcp import Client, StdioServerParameters

from octomem.engine.memory.facade import Memory
from octomem.engine.memory.forget import is_tombstone

LISBON = [("Ana", "Let us plan the Lisbon trip."),
          ("Ben", "My card PIN is 4921, use it for the booking."),
          ("Ana", "We land at 14:05 on Friday."),
          ("Ben", "Then dinner in Alfama at eight.")]


def chat(path: Path, lines: list[tuple[str, str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"speaker": s, "text": t}) + "\n" for s, t in lines),
                    encoding="utf-8")
    return path


def stored(project: Path) -> dict[str, str]:
    """``{id: text}`` of the local scope's current documents, read from its export."""
    ran = octomem(project, "export", "--scope", "local", "-")
    rows = [json.loads(line) for line in ran.out.splitlines() if line.strip()]
    return {r["id"]: r["text"] for r in rows if r.get("type", "document") == "document"
            and "text" in r and not r.get("superseded_by")}


def current(memory: Memory) -> dict[str, str]:
    return {d.id: d.text for d in memory.statements("local")}


def test_cli_redacting_a_forgotten_line_drops_no_other_turn(project: Path) -> None:
    """F1 (a): forget a turn, delete its line, ingest again: every other turn stays."""
    path = chat(project / "chat.jsonl", LISBON)
    octomem(project, "ingest", "chat.jsonl")
    octomem(project, "forget", "chat:1", "--reason", "secret")
    chat(path, [LISBON[0], LISBON[2], LISBON[3]])
    again = octomem(project, "ingest", "chat.jsonl")
    assert "forgotten, not re-added" not in again.out, again.out
    fresh = next(i for i in current_ids(project) if i.startswith("chat:1~"))
    assert f"new id: chat:1 was forgotten and now holds another text: stored as {fresh}" \
        in again.out
    texts = sorted(stored(project).values())
    assert texts == ["Ana: Let us plan the Lisbon trip.", "Ana: We land at 14:05 on Friday.",
                     "Ben: Then dinner in Alfama at eight."], texts
    hits = octomem(project, "search", "when do we land", "--json").json()["hits"]
    assert hits and "14:05" in hits[0]["text"]
    third = octomem(project, "ingest", "chat.jsonl")  # stable: nothing changes
    assert "added 0, replaced 0, unchanged 3 documents;" in third.out, third.out
    assert sorted(stored(project).values()) == texts


def current_ids(project: Path) -> list[str]:
    return sorted(stored(project))


def test_cli_a_forgotten_turn_whose_line_moved_stays_out(project: Path) -> None:
    """F1 (b): the first line rolls off; the forgotten text sits at another position."""
    trip = [("Ana", "We take the night train."), ("Ben", "Good, it saves a hotel night."),
            ("Ana", "I booked a couchette for both of us, car 9."),
            ("Ben", "Great, and the hostel in Alfama is paid until Sunday.")]
    path = chat(project / "trip.jsonl", trip)
    octomem(project, "ingest", "trip.jsonl")
    octomem(project, "forget", "trip:2")
    chat(path, trip[1:])
    again = octomem(project, "ingest", "trip.jsonl")
    assert "1 forgotten, not re-added" in again.out, again.out
    assert "not re-added: trip.jsonl: turn trip:2 (now read as trip:1) (forgotten " \
        in again.out, again.out
    texts = sorted(stored(project).values())
    assert texts == ["Ben: Good, it saves a hotel night.",
                     "Ben: Great, and the hostel in Alfama is paid until Sunday."], texts
    assert not any("couchette" in t for t in texts)
    hits = octomem(project, "search", "hostel in Alfama", "--json").json()["hits"]
    assert hits and "hostel" in hits[0]["text"]
    third = octomem(project, "ingest", "trip.jsonl")
    assert "unchanged 2 documents, 1 forgotten, not re-added" in third.out, third.out


def test_engine_an_old_forget_log_keeps_its_turn_out_and_a_repeat_stays(memory: Memory,
                                                                      tmp_path: Path) -> None:
    """A log entry written before (same id, same text) still keeps its turn out; the same
    words said again later in the conversation, never forgotten, are kept."""
    path = chat(tmp_path / "project" / "c.jsonl",
                [("Ana", "ok"), ("Ben", "The code is 7781."), ("Ana", "ok")])
    memory.ingest(str(path))
    memory.forget("c:0")
    _, again = memory.ingest(str(path))
    assert again.skipped_forgotten == ["c:0"] and current(memory) == {
        "c:1": "Ben: The code is 7781.", "c:2": "Ana: ok"}
    chat(path, [("Ben", "The code is 7781."), ("Ana", "ok")])  # the first line deleted
    _, third = memory.ingest(str(path))
    assert sorted(current(memory).values()) == ["Ana: ok", "Ben: The code is 7781."]
    assert third.skipped_forgotten == []  # the forgotten line is the one deleted


def test_cli_a_forgotten_file_is_named_fails_when_named_and_readd_brings_it_back(
        project: Path) -> None:
    """F3: the note names the file; a named file that stored nothing exits 1; --readd
    stores it, lifting the tombstone in the same transaction; an unchanged forgotten file
    ingested again (not --readd) stays out."""
    notes = project / "notes"
    notes.mkdir()
    (notes / "meeting.md").write_text("Old meeting notes: the budget is 5k.\n")
    (notes / "other.md").write_text("other\n")
    octomem(project, "ingest", "notes")
    hit = octomem(project, "search", "budget", "--json").json()["hits"][0]["id"]
    octomem(project, "forget", hit, "--reason", "old")
    folder = octomem(project, "ingest", "notes")  # unchanged: stays out, named, status 0
    assert "not re-added: notes/meeting.md (forgotten " in folder.out, folder.out
    (notes / "meeting.md").write_text("Brand new meeting notes for December: we hire two "
                                      "engineers.\n")
    folder = octomem(project, "ingest", "notes")
    assert "not re-added: notes/meeting.md (forgotten " in folder.out
    assert ", changed since); --readd stores it again" in folder.out, folder.out
    named = octomem(project, "ingest", "notes/meeting.md", ok=False)
    assert named.code == 1, (named.out, named.err)
    assert "notes/meeting.md: forgotten, nothing of it stored; octomem ingest --readd PATH" \
        in named.err, named.err
    assert "engineers" not in " ".join(stored(project).values())
    back = octomem(project, "ingest", "--readd", "notes/meeting.md")
    assert "added 1" in back.out and "re-added: notes/meeting.md (forgotten " in back.out
    assert octomem(project, "search", "hire engineers", "--json").json()["hits"][0]["id"] == hit
    again = octomem(project, "ingest", "notes")  # the tombstone is history now
    assert "not re-added" not in again.out and "unchanged 2 documents" in again.out, again.out


def test_engine_readd_lifts_the_tombstone_and_keeps_its_history(memory: Memory,
                                                                tmp_path: Path) -> None:
    note = tmp_path / "project" / "todo.md"
    note.write_text("# TODO\nCall the bank.\n")
    memory.ingest(str(note))
    doc = next(iter(current(memory)))
    memory.forget(doc, reason="done")
    _, kept_out = memory.ingest(str(note))
    assert kept_out.skipped_forgotten == [doc] and kept_out.left_out[0].changed is False
    _, back = memory.ingest(str(note), readd=True)
    assert back.added == [doc] and [one.id for one in back.readded] == [doc]
    storage = memory.scopes.get("local").arms.storage  # type: ignore[union-attr]
    record = storage.get_forgotten(doc)
    assert record is not None and not is_tombstone(record)
    assert "re-added by ingest --readd on " in (record.reason or "")
    assert record.reason.endswith(": done")
    memory.forget(doc)  # forgotten again: a tombstone again
    assert is_tombstone(storage.get_forgotten(doc))


@pytest.mark.slow
def test_mcp_ingest_names_what_forget_kept_out_and_renamed(tmp_path: Path) -> None:
    project = tmp_path / "project"
    path = chat(project / "chat.jsonl", LISBON)
    home = tmp_path / "home"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "octomem.mcp_server"], cwd=str(project),
        env={"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
             "XDG_DATA_HOME": str(home / ".local" / "share"), "HF_HUB_OFFLINE": "1",
             "XDG_CACHE_HOME": str(home / ".cache"), "OCTOMEM_DATA_DIR": str(tmp_path / "d"),
             "OCTOMEM_PIPELINE__EMBEDDER": "hashing"})

    async def calls() -> list[dict]:
        async with Client(params, read_timeout_seconds=60) as client:
            results = []
            for tool, args in (("ingest", {"path_or_text": str(path)}),
                               ("forget", {"text_or_id": "chat:1", "scope": "local"}),
                               ("ingest", {"path_or_text": str(path)}),
                               ("ingest", {"path_or_text": str(path), "readd": True})):
                if tool == "ingest" and len(results) == 2:
                    chat(path, [LISBON[0], LISBON[2], LISBON[3]])
                result = await client.call_tool(tool, args)
                assert not result.is_error, result.content
                results.append(result.structured_content)
            return results

    async def main() -> list[dict]:
        with anyio.fail_after(120):
            return await calls()

    _, _, again, readd = anyio.run(main, backend="asyncio")
    fresh = again["renamed"][0].split(" -> ")[1]
    assert again["renamed"] == [f"chat:1 -> {fresh}"] and fresh.startswith("chat:1~")
    assert again["forgotten_not_readded"] == [] and again["forgotten_left_out"] == []
    assert again["revised"] == ["chat:2"] and fresh in again["added"]
    assert [g["id"] for g in again["missing"]] == ["chat:3"]
    assert readd["readded"] == [] and readd["added"] == []
