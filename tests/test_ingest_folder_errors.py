"""A folder with a bad file in it: every other file is stored, every bad file is noted
(``skipped: FILE:LINE: why``), and the command ends with one error line and status 1; a
bad file named on its own still fails, naming its line, with nothing of it stored
(fresh-user trial 3, finding 7). The MCP ``ingest`` tool does the same: the bad files
under ``skipped`` with why, the rest stored."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from cli_run import octomem
from mcp_stdio import stdio_client

pytestmark = pytest.mark.slow

GOOD_CHAT = [{"speaker": "Ana", "text": "Which train do we take to Porto?", "session": "1"},
             {"speaker": "Ben", "text": "The 9:09 from Santa Apolonia.", "session": "1"}]


def _jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def _stored(project: Path) -> list[str]:
    """Ids of the documents in the project's (local) SQLite file."""
    with sqlite3.connect(project / ".octomem" / "octomem.sqlite3") as conn:
        return sorted(r[0] for r in conn.execute("SELECT id FROM documents"))


def _folder(root: Path) -> Path:
    folder = root / "mixed"
    folder.mkdir()
    (folder / "wifi.md").write_text("# Wifi\nThe guest wifi password is on the fridge.\n")
    (folder / "trip.jsonl").write_text(_jsonl(GOOD_CHAT))
    (folder / "bad.jsonl").write_text(_jsonl([GOOD_CHAT[0], {"speaker": "Ben", "text": "x",
                                                             "sesion": "1"}]))
    (folder / "broken.jsonl").write_text(_jsonl(GOOD_CHAT) + '{"speaker": "Ana", "text": \n')
    (folder / "latin.txt").write_bytes("café au lait".encode("utf-16"))
    (folder / "empty.md").write_text("")
    return folder


def test_a_bad_file_in_a_folder_is_skipped_and_the_rest_stored(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    done = octomem(tmp_path, "ingest", str(folder), ok=False)
    assert done.code == 1
    skipped = sorted(line for line in done.err.splitlines() if line.startswith("skipped: "))
    assert skipped == [
        f"skipped: {folder / 'bad.jsonl'}:2: unknown field 'sesion'; a chat turn has "
        "conversation, id, metadata, role, session, speaker, text, time, title",
        f"skipped: {folder / 'broken.jsonl'}:3: not valid JSON: Expecting value at column 28",
        f"skipped: {folder / 'empty.md'}: empty file",
        f"skipped: {folder / 'latin.txt'}: not UTF-8 text (invalid start byte at byte 0)",
    ]
    assert done.err.splitlines()[-1] == (
        "error: 3 files in the folders skipped for an error (each noted above as skipped:); "
        "the rest was stored")
    ids = _stored(tmp_path)
    assert ids == sorted(["trip:0", "trip:1", *(i for i in ids if i.startswith("file:"))])
    assert len([i for i in ids if i.startswith("file:")]) == 1  # wifi.md
    hits = octomem(tmp_path, "search", "guest wifi password", "--json").json()["hits"]
    assert hits[0]["text"].endswith("The guest wifi password is on the fridge.")
    again = octomem(tmp_path, "ingest", str(folder), ok=False)  # the good ones: unchanged
    assert again.code == 1 and "unchanged 1 document;" in again.out
    assert _stored(tmp_path) == ids


def test_a_bad_transcript_named_on_its_own_fails_and_stores_nothing_of_it(
        tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    done = octomem(tmp_path, "ingest", str(folder / "bad.jsonl"), str(folder / "wifi.md"),
                   str(folder / "latin.txt"), ok=False)
    assert done.code == 1
    assert done.err.splitlines()[-1] == (
        f"error: {folder / 'bad.jsonl'}:2: unknown field 'sesion'; a chat turn "
        "has conversation, id, metadata, role, session, speaker, text, time, title; "
        f"{folder / 'latin.txt'}: not UTF-8 text (invalid start byte at byte 0)")
    ids = _stored(tmp_path)
    assert len(ids) == 1 and ids[0].startswith("file:")  # wifi.md only: no turn of bad.jsonl
    alone = octomem(tmp_path, "ingest", str(folder / "broken.jsonl"), ok=False)
    assert alone.code == 1 and alone.err.strip() == (
        f"error: {folder / 'broken.jsonl'}:3: not valid JSON: Expecting value at column 28")
    assert _stored(tmp_path) == ids


def test_mcp_ingest_of_a_folder_lists_the_bad_files_and_stores_the_rest(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    folder = _folder(project)
    with stdio_client(tmp_path, project) as mcp:
        done = mcp.ok("ingest", path_or_text="mixed")
        assert sorted((Path(s["path"]).name, s["why"]) for s in done["skipped"]) == [
            ("bad.jsonl", f"{folder / 'bad.jsonl'}:2: unknown field 'sesion'; a chat turn has "
             "conversation, id, metadata, role, session, speaker, text, time, title"),
            ("broken.jsonl",
             f"{folder / 'broken.jsonl'}:3: not valid JSON: Expecting value at column 28"),
            ("empty.md", f"{folder / 'empty.md'}: empty file"),
            ("latin.txt", f"{folder / 'latin.txt'}: not UTF-8 text (invalid start byte at byte 0)"),
        ]
        assert sorted(i for i in done["added"] if not i.startswith("file:")) == ["trip:0",
                                                                                "trip:1"]
        assert len(done["added"]) == 3  # and wifi.md
        hits = mcp.ok("recall", query="guest wifi password")["hits"]
        assert hits[0]["text"].endswith("The guest wifi password is on the fridge.")
        # a bad file named on its own is still an error naming its line
        message = mcp.error("ingest", path_or_text="mixed/broken.jsonl")
        assert "broken.jsonl:3: not valid JSON" in message
        for name in ("wifi.md", "trip.jsonl"):
            (folder / name).unlink()
        message = mcp.error("ingest", path_or_text="mixed")  # nothing readable left
        assert "no file in" in message and "bad.jsonl:2: unknown field 'sesion'" in message
    assert sorted(i for i in _stored(project) if not i.startswith("file:")) == ["trip:0",
                                                                                "trip:1"]


def test_names_that_are_not_utf8_and_special_files(tmp_path: Path) -> None:
    """Trial 9: a Latin-1 file name crashed the folder's whole ingest (nothing stored), a
    FIFO in a folder hung it forever, and a named FIFO or /dev/null stored nothing
    silently with status 0."""
    import os

    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "zebra.md").write_text("A new note about zebras\n")
    latin = os.fsdecode(bytes(folder) + b"/caf\xe9.md")
    Path(latin).write_text("hi\n")
    Path(os.fsdecode(bytes(folder) + b"/r\xe9sum\xe9.jsonl")).write_text(_jsonl(GOOD_CHAT))
    os.mkfifo(folder / "pipe.md")  # read, it would block until a writer came
    done = octomem(tmp_path, "ingest", str(folder), ok=False)
    assert done.code == 1
    assert sorted(line for line in done.err.splitlines() if line.startswith("skipped: ")) == [
        f"skipped: {folder}/caf\\xe9.md: its name is not UTF-8; rename the file to ingest it",
        f"skipped: {folder}/r\\xe9sum\\xe9.jsonl: its name is not UTF-8; rename the file to "
        "ingest it"]
    assert ("left alone: 1 file in the folders, not read:\n"
            f"  {folder}/pipe.md: not a regular file (a FIFO, socket or device): never read\n"
            ) in done.err
    hits = octomem(tmp_path, "search", "zebras", "--json").json()["hits"]
    assert hits[0]["text"].endswith("A new note about zebras")  # the rest was stored
    for named, status, why in (
            (latin, 2, f"argument '{folder}/caf\\xe9.md' is not UTF-8 text (a file whose name "
             "is not UTF-8: rename it); see `octomem ingest --help`"),
            (str(folder / "pipe.md"), 1, f"{folder / 'pipe.md'}: not a regular file (a FIFO, "
             "socket or device); nothing is read from it"),
            ("/dev/null", 1, "/dev/null: not a regular file (a FIFO, socket or device); "
             "nothing is read from it")):
        alone = octomem(tmp_path, "ingest", named, ok=False)
        assert (alone.code, alone.err.strip()) == (status, f"error: {why}"), named
    (tmp_path / "dangling.md").symlink_to(tmp_path / "no-such-target")
    dangling = octomem(tmp_path, "ingest", "dangling.md", ok=False)
    assert dangling.err.strip() == ("error: dangling.md: no such file or folder (a symlink "
                                    "to a missing target)")


def test_a_skipped_file_does_not_keep_gone_files(tmp_path: Path) -> None:
    """Trial 9: one unreadable file in a folder made every ingest of it fail, so files
    deleted from it were never forgotten; the unreadable file is still there (kept)."""
    folder = tmp_path / "notes"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "team.txt").write_text("Team notes about llamas\n")
    (folder / "latin.txt").write_bytes("café".encode("latin-1"))
    (folder / "good.md").write_text("Good notes about alpacas\n")
    first = octomem(tmp_path, "ingest", str(folder), ok=False)
    assert first.code == 1 and "added 2," in first.out
    (folder / "sub" / "team.txt").unlink()
    again = octomem(tmp_path, "ingest", str(folder), ok=False)
    assert again.code == 1 and "skipped: " in again.err
    assert "gone: notes/sub/team.txt: forgot its document" in again.out  # as skipped: names
    assert octomem(tmp_path, "search", "llamas", "--json").json()["hits"] == []
    kept = octomem(tmp_path, "search", "alpacas", "--json").json()["hits"]
    assert kept[0]["text"].endswith("Good notes about alpacas")


def test_mcp_ingest_names_a_file_whose_name_is_not_utf8(tmp_path: Path) -> None:
    import os

    project = tmp_path / "project"
    folder = project / "notes"
    folder.mkdir(parents=True)
    (folder / "zebra.md").write_text("A new note about zebras\n")
    Path(os.fsdecode(bytes(folder) + b"/caf\xe9.md")).write_text("hi\n")
    with stdio_client(tmp_path, project) as mcp:
        done = mcp.ok("ingest", path_or_text="notes")
        assert done["skipped"] == [{"path": f"{folder}/caf\\xe9.md", "why": (
            f"{folder}/caf\\xe9.md: its name is not UTF-8; rename the file to ingest it")}]
        assert len(done["added"]) == 1


def test_the_gone_line_names_the_file_from_the_current_folder(tmp_path: Path) -> None:
    """Trial 13 M3: ``cd fold && octomem ingest .`` after a rename said ``gone:
    …3/fold/notes/deploy.md`` (the path cut inside a folder name); now ``gone:
    notes/deploy.md``, as ``skipped:`` lines name files, whole at 80 columns."""
    fold = tmp_path / "trial13" / "fold"
    (fold / "notes").mkdir(parents=True)
    (fold / "notes" / "deploy.md").write_text("# Deploy\n\nDeploys go through staging.\n")
    (fold / "notes" / "keep.md").write_text("# Keep\n\nThis file stays.\n")
    octomem(fold, "ingest", ".", spawn=True)
    (fold / "notes" / "deploy.md").rename(fold / "notes" / "deploy2.md")
    again = octomem(fold, "ingest", ".", spawn=True, COLUMNS="80")
    gone = [line for line in again.out.splitlines() if line.startswith("gone: ")]
    assert len(gone) == 1 and gone[0].startswith("gone: notes/deploy.md: forgot its document "
                                                 "file:"), again.out
