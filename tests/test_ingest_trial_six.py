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
    assert first.out.startswith("added 3, replaced 0, unchanged 0 documents;")
    octomem(tmp_path, "forget", "trip:1", "--scope", "local", "--reason", "private")
    chat(trip, ["Fly to Lisbon", "Stay in Alfama", "Train to Porto", "Back on Sunday"])
    again = octomem(tmp_path, "ingest", "chats/trip.jsonl")
    assert again.out.startswith("added 1, replaced 0, unchanged 2 documents, 1 forgotten, "
                                "not re-added;"), again.out
    listed = octomem(tmp_path, "search", "Alfama", "--json").json()
    assert all(h["id"] != "trip:1" for h in listed["hits"])
    third = octomem(tmp_path, "ingest", "chats/trip.jsonl")  # and stays so
    assert third.out.startswith("added 0, replaced 0, unchanged 3 documents, 1 forgotten")


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
