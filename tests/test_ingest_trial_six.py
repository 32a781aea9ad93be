"""What the sixth fresh-user trial found in ``ingest``, run on a real SQLite store: a
forgotten turn or file stays forgotten when its transcript or file is ingested again (CLI,
engine and MCP over stdio)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from cli_run import octomem
from mcp import Client, StdioServerParameters

from octomem.engine.errors import OctomemError
from octomem.engine.memory.facade import Memory


def chat(path: Path, texts: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps({"speaker": "Ana", "text": t}) + "\n" for t in texts),
                    encoding="utf-8")
    return path


def turn_ids(memory: Memory) -> list[str]:
    return sorted(d.id for d in memory.statements("local"))


def test_cli_a_forgotten_turn_is_not_added_again(tmp_path: Path) -> None:
    trip = chat(tmp_path / "chats" / "trip.jsonl", ["Fly to Lisbon", "Stay in Alfama",
                                                    "Train to Porto"])
    first = octomem(tmp_path, "ingest", "chats/trip.jsonl")
    assert first.out.startswith("chats/trip.jsonl (3 turns): added 3, replaced 0, unchanged 0 "
                                "documents;")
    octomem(tmp_path, "forget", "trip:1", "--scope", "local", "--reason", "private")
    chat(trip, ["Fly to Lisbon", "Stay in Alfama", "Train to Porto", "Back on Sunday"])
    again = octomem(tmp_path, "ingest", "chats/trip.jsonl")
    assert again.out.startswith("chats/trip.jsonl (4 turns): added 1, replaced 0, unchanged 2 "
                                "documents, 1 forgotten, not re-added;"), again.out
    listed = octomem(tmp_path, "search", "Alfama", "--json").json()
    assert all(h["id"] != "trip:1" for h in listed["hits"])
    third = octomem(tmp_path, "ingest", "chats/trip.jsonl")  # and stays so
    assert third.out.startswith("chats/trip.jsonl (4 turns): added 0, replaced 0, unchanged 3 "
                                "documents, 1 forgotten")


def test_engine_a_forgotten_file_in_a_folder_is_not_added_again(memory: Memory,
                                                              tmp_path: Path) -> None:
    folder = tmp_path / "project" / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# A\nThe castle opens at nine.\n")
    (folder / "b.md").write_text("# B\nThe tram is number 28.\n")
    _, first = memory.ingest(str(folder))
    secret = next(d.id for d in memory.statements("local") if "tram" in d.text)
    memory.forget(secret, scope="local", reason="not to keep")
    _, again = memory.ingest(str(folder))
    assert again.skipped_forgotten == [secret] and again.added == []
    assert len(again.unchanged) == 1
    assert secret not in turn_ids(memory) and len(turn_ids(memory)) == 1


@pytest.mark.slow
def test_mcp_ingest_says_which_forgotten_ids_were_not_added(tmp_path: Path) -> None:
    project = tmp_path / "project"
    trip = chat(project / "trip.jsonl", ["Fly to Lisbon", "Stay in Alfama"])
    home = tmp_path / "home"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "octomem.mcp_server"], cwd=str(project),
        env={"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
             "XDG_DATA_HOME": str(home / ".local" / "share"), "HF_HUB_OFFLINE": "1",
             "XDG_CACHE_HOME": str(home / ".cache"), "OCTOMEM_DATA_DIR": str(tmp_path / "d"),
             "OCTOMEM_PIPELINE__EMBEDDER": "hashing"})

    async def main() -> list[dict]:
        with anyio.fail_after(120):
            return await calls()

    async def calls() -> list[dict]:
        async with Client(params, read_timeout_seconds=60) as client:
            results = []
            for tool, args in (("ingest", {"path_or_text": str(trip)}),
                               ("forget", {"text_or_id": "trip:0", "scope": "local"}),
                               ("ingest", {"path_or_text": str(trip)})):
                result = await client.call_tool(tool, args)
                assert not result.is_error, result.content
                results.append(result.structured_content)
            return results

    first, _, again = anyio.run(main, backend="asyncio")
    assert first["added"] == ["trip:0", "trip:1"] and first["forgotten_not_readded"] == []
    assert again["added"] == [] and again["unchanged"] == ["trip:1"]
    assert again["forgotten_not_readded"] == ["trip:0"]


def test_cli_two_transcripts_named_alike_never_overwrite_each_other(tmp_path: Path) -> None:
    chat(tmp_path / "coll" / "a" / "chat.jsonl", ["Alpha said this"])
    chat(tmp_path / "coll" / "b" / "chat.jsonl", ["Beta said that"])
    folder = octomem(tmp_path, "ingest", "coll")  # both in one call: b gets its own name
    assert folder.out.count("added 1, replaced 0, unchanged 0 documents;") == 2, folder.out
    hits = octomem(tmp_path, "search", "said", "--json").json()["hits"]
    assert sorted((h["id"], h["text"]) for h in hits) == [
        ("b/chat:0", "Ana: Beta said that"), ("chat:0", "Ana: Alpha said this")]
    for name in ("coll/b/chat.jsonl", "coll/a/chat.jsonl"):  # again: the same ids
        again = octomem(tmp_path, "ingest", name)
        assert again.out.startswith(f"{name} (1 turn): added 0, replaced 0, unchanged 1 "
                                    "document;"), again.out
    clash = chat(tmp_path / "c" / "chat.jsonl", ["Gamma"])  # names its own conversation,
    clash.write_text(json.dumps({"conversation": "chat", "speaker": "Cy", "text": "Gamma"})
                     + "\n", encoding="utf-8")  # which a's turns hold: refused
    named = octomem(tmp_path, "ingest", "c/chat.jsonl", ok=False)
    assert named.code == 1 and named.err.startswith(
        "error: c/chat.jsonl: turn id 'chat:0' is already held by a turn from "
        f"{(tmp_path / 'coll' / 'a' / 'chat.jsonl').resolve()};")


def test_engine_gives_a_transcript_named_like_another_its_own_conversation(
        memory: Memory, tmp_path: Path) -> None:
    root = tmp_path / "project"
    first = chat(root / "a" / "chat.jsonl", ["Alpha said this", "and more"])
    second = chat(root / "b" / "chat.jsonl", ["Beta said that"])
    memory.ingest(str(first))
    _, report = memory.ingest(str(second))
    assert report.added == ["b/chat:0"]
    _, report = memory.ingest(str(root))  # the folder: every turn unchanged
    assert report.skipped == [] and report.added == []
    assert sorted(report.unchanged) == ["b/chat:0", "chat:0", "chat:1"]
    first.unlink()  # a's file gone: b keeps the name its turns were stored under
    _, report = memory.ingest(str(second))
    assert report.unchanged == ["b/chat:0"] and report.added == []
    named = json.dumps({"conversation": "beta", "speaker": "Ben", "text": "Beta said that"})
    second.write_text(named + "\n", encoding="utf-8")  # its own conversation: stored
    _, fixed = memory.ingest(str(second))
    assert fixed.added == ["beta:0"] and [g.id for g in fixed.forgotten] == ["b/chat:0"]
    assert turn_ids(memory) == ["beta:0", "chat:0", "chat:1"]


CLAUDE = Path(__file__).parent / "data" / "claude-code" / \
    "5f0c2a9e-1b7d-4c3e-9a61-0d2b7e4f8c13.jsonl"


def test_cli_an_unfinished_last_line_is_left_out_and_read_next_time(tmp_path: Path) -> None:
    lines = CLAUDE.read_text().splitlines()
    session = tmp_path / "session.jsonl"
    half = lines[-1][: len(lines[-1]) // 2]  # Claude Code is still writing the last record
    session.write_text("\n".join(lines[:-1]) + "\n" + half)
    first = octomem(tmp_path, "ingest", "session.jsonl")
    assert ("note: session.jsonl:15: left out: the last line is not complete JSON yet (no "
            "newline at its end); it is read on the next ingest") in first.err
    assert first.out.startswith("session.jsonl (3 turns): added 3, replaced 0, unchanged 0 "
                                "documents;")
    session.write_text("\n".join(lines) + "\n")  # now written whole
    again = octomem(tmp_path, "ingest", "session.jsonl")
    assert again.out.startswith("session.jsonl (4 turns): added 1, replaced 0, unchanged 3 "
                                "documents;")
    assert "left out" not in again.err
    hit = octomem(tmp_path, "search", "invoice table migration Friday", "--json").json()
    assert "claude:a-0012" in [h["id"] for h in hit["hits"]]
    broken = tmp_path / "broken.jsonl"  # a bad line that is not the last: still an error
    broken.write_text("\n".join([*lines[:3], half, *lines[3:]]) + "\n")
    failed = octomem(tmp_path, "ingest", "broken.jsonl", ok=False)
    assert failed.code == 1 and "broken.jsonl:4: not valid JSON" in failed.err


def test_a_transcript_whose_only_line_is_unfinished_says_so(memory: Memory,
                                                            tmp_path: Path) -> None:
    path = tmp_path / "started.jsonl"
    path.write_text('{"session": "s1", "speaker": "user", "text": "hel')
    with pytest.raises(OctomemError, match=r"started.jsonl:1: its only line is not complete "
                                           r"JSON yet \(no newline at its end\)"):
        memory.ingest(str(path))
    path.write_text('{"session": "s1", "speaker": "user", "text": "hello"\n')  # broken, ended
    with pytest.raises(OctomemError, match=r"started.jsonl:1: not valid JSON"):
        memory.ingest(str(path))
    path.write_text('{"session": "s1", "speaker": "user", "text": "hello"}\n')  # written
    _, report = memory.ingest(str(path))
    assert report.added == ["started:0"] and report.unfinished == []


def test_engine_reports_the_unfinished_last_line(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "project" / "trip.jsonl"
    chat(path, ["Fly to Lisbon"])
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"speaker": "Ana", "text": "Stay in Alf')
    _, report = memory.ingest(str(path))
    assert report.added == ["trip:0"]
    assert report.unfinished == [f"{path}:2: left out: the last line is not complete JSON yet "
                                 "(no newline at its end); it is read on the next ingest"]
    path.write_text(path.read_text() + 'ama"}')  # complete JSON, still no newline: read
    _, grown = memory.ingest(str(path))
    assert grown.added == ["trip:1"] and grown.unfinished == []


def test_cli_a_folder_with_nothing_to_read_says_so(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "pictures").mkdir()
    (tmp_path / "pictures" / "a.png").write_bytes(b"\x89PNG")
    alone = octomem(tmp_path, "ingest", "empty", ok=False)
    assert (alone.code, alone.out) == (1, "")
    assert alone.err == "error: no text file (.md, .txt, .rst) or transcript (.jsonl) in empty\n"
    assert not (tmp_path / ".octomem").exists()  # nothing stored, no store created
    (tmp_path / "notes.md").write_text("# Notes\nThe castle opens at nine.\n")
    both = octomem(tmp_path, "ingest", "notes.md", "pictures", ok=False)  # the other stored
    assert both.code == 1 and both.out.startswith("added 1, replaced 0, unchanged 0 documents;")
    assert both.err.splitlines()[-1] == ("error: no text file (.md, .txt, .rst) "
                                         "or transcript (.jsonl) in pictures")


def test_engine_a_moved_or_copied_transcript_is_not_refused(memory: Memory,
                                                           tmp_path: Path) -> None:
    root = tmp_path / "project"
    old = chat(root / "old" / "chat.jsonl", ["Alpha said this", "and more"])
    memory.ingest(str(old))
    copy = chat(root / "copy" / "chat.jsonl", ["Alpha said this", "and more"])
    _, same = memory.ingest(str(copy))  # the same turns: nothing overwritten
    assert same.unchanged == ["chat:0", "chat:1"]
    moved = root / "new" / "chat.jsonl"
    moved.parent.mkdir()
    old.rename(moved)
    copy.unlink()
    chat(moved, ["Alpha said this", "and more, edited", "and a third"])
    _, report = memory.ingest(str(moved))  # the old path is gone: it moved
    # chat:0 unchanged but read from the new path: stored again there (moved)
    assert report.replaced == ["chat:0", "chat:1"] and report.added == ["chat:2"]
    assert report.moved == ["chat:0"]
    assert {memory.find(t)[0][1].uri for t in ("chat:0", "chat:1")} == {
        moved.resolve().as_uri()}
