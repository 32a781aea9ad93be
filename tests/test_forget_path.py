"""Trial 17 G9: a folder renamed or deleted after its ingest left its documents current
for good (duplicates of the renamed folder's), and ``forget docs/onboarding.md`` of the
path that was gone was refused with advice to forget it by its path; a folder could not
be forgotten at all. Now ``forget PATH`` finds what was stored from the path, whether it
exists or not: a file, a transcript's turns, a folder's every file and turn below it, in
one transaction, each tombstoned as ``forget ID`` would. Real SQLite stores; the CLI in
process; a real MCP client over stdio."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_run import octomem
from mcp_stdio import stdio_client


def _docs(root: Path, word: str) -> None:
    (root / "chats").mkdir(parents=True)
    (root / "onboarding.md").write_text(
        f"# Onboarding\n\nRequest a laptop from {word} on your first day.\n", encoding="utf-8")
    (root / "deploy.md").write_text(f"# Deploys\n\nWe deploy on Tuesdays via {word}.\n",
                                    encoding="utf-8")
    (root / "chats" / "trip.jsonl").write_text("".join(json.dumps({
        "speaker": "user" if i % 2 == 0 else "assistant",
        "text": f"message {i} about the {word} offsite"}) + "\n" for i in range(6)),
        encoding="utf-8")


def _local(project: Path) -> dict:
    return octomem(project, "status", "--json").json()["scopes"]["local"]


def test_a_renamed_folders_documents_are_forgotten_by_their_old_paths(project: Path) -> None:
    _docs(project / "docs", "quillfeather")
    (project / "docs" / "lunch.md").write_text("# Lunch\n\nLunch is at noon.\n",
                                               encoding="utf-8")
    octomem(project, "ingest", "docs")
    (project / "docs").rename(project / "handbook")  # not ingested from there (yet)
    one = octomem(project, "forget", "docs/onboarding.md", "--reason", "moved")
    assert "forgot file:" in one.out, one.out  # a gone file, by its path
    done = octomem(project, "forget", "docs")  # a gone folder: the rest below it
    said = " ".join(done.out.split())
    assert said.startswith("forgot 2 files ingested from docs from the local scope "
                           "(deploy.md, lunch.md); an ingest keeps them out"), said
    assert said.endswith("; kept 6 turns of 1 transcript no longer there (chats/trip.jsonl): "
                         "a transcript moved and ingested again holds the same turns; forget "
                         "one by its own path to drop them"), said
    status = _local(project)
    assert (status["current"], status["forgotten"]) == (6, 3), status
    again = octomem(project, "forget", "docs", ok=False)  # nothing of it left
    said = " ".join(again.err.split())
    assert again.code == 1 and "forgot nothing ingested from docs" in said, said
    assert "kept 6 turns" in said, said


def test_a_renamed_folder_ingested_from_its_new_place_is_stored_once(project: Path) -> None:
    # the files move to their new paths (the old documents forgotten as moved), the
    # transcript's turns name the new file: nothing is left under docs to forget
    _docs(project / "docs", "quillfeather")
    octomem(project, "ingest", "docs")
    (project / "docs").rename(project / "handbook")
    out = octomem(project, "ingest", "handbook").out
    assert out.count("moved: docs/") == 2, out
    assert _local(project)["current"] == 8  # 2 files and 6 turns, once each
    hits = octomem(project, "search", "quillfeather offsite", "--json").json()["hits"]
    assert hits and all("/handbook/" in h["uri"] for h in hits), hits
    gone = octomem(project, "forget", "docs", ok=False)
    assert gone.code == 1 and "nothing stored was ingested from" in gone.err, gone.err


def test_a_deleted_folder_leaves_no_text_in_the_stores_files(project: Path) -> None:
    _docs(project / "old", "zanzibarite")
    (project / "keep.md").write_text("# Keep\n\nThe kept note.\n", encoding="utf-8")
    octomem(project, "ingest", "old")
    octomem(project, "ingest", "keep.md")
    shutil.rmtree(project / "old")
    out = octomem(project, "forget", str(project / "old"), "--json").json()
    assert (out["files_forgotten"], out["turns_forgotten"]) == (2, 0), out
    assert out.get("forgotten") is None and len(out["files"]) == 2, out
    assert "kept 6 turns of 1 transcript no longer there (chats/trip.jsonl)" in out["message"]
    turns = octomem(project, "forget", "old/chats/trip.jsonl")  # a gone transcript, named
    assert "forgot the 6 turns of old/chats/trip.jsonl from the local scope" in turns.out
    assert _local(project)["current"] == 1
    for stored in (project / ".octomem").rglob("*"):
        if stored.is_file():
            assert b"zanzibarite" not in stored.read_bytes(), stored


def test_forget_of_an_unknown_path_names_it(project: Path) -> None:
    octomem(project, "add", "The ferry leaves at nine")
    missing = octomem(project, "forget", "notes/zzz.md", ok=False)
    said = " ".join(missing.err.split())
    assert missing.code == 1 and "nothing stored was ingested from" in said, said
    assert "zzz.md" in said and "by its path" not in said, said


@pytest.mark.slow
def test_the_mcp_forget_tool_takes_a_gone_folder(tmp_path: Path, project: Path) -> None:
    _docs(project / "docs", "quillfeather")
    with stdio_client(tmp_path, project) as mcp:
        assert mcp.ok("ingest", path_or_text="docs")["counts"]["added"] == 8
        shutil.rmtree(project / "docs")
        out = mcp.ok("forget", text_or_id="docs", reason="folder deleted")
        assert (out["files_forgotten"], out["turns_forgotten"]) == (2, 0), out
        assert out["message"].startswith("forgot 2 files ingested from docs from the local "
                                         "scope; an ingest keeps them out"), out
        assert "kept 6 turns" in out["message"], out
        out = mcp.ok("forget", text_or_id="docs/chats/trip.jsonl")
        assert out["turns_forgotten"] == 6, out
        assert not mcp.ok("recall", query="quillfeather offsite laptop")["hits"]
        assert "nothing stored was ingested from" in mcp.error("forget", text_or_id="docs")
