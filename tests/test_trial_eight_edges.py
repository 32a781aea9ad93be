"""Fresh-user trial 8, the CLI's edges: a wrong ``--project-root`` creates nothing,
``export`` keeps an existing file, a failed one-file ingest prints no empty summary, and
a malformed JSON Lines file names every bad line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cli_run import octomem


def test_a_missing_project_root_is_a_usage_error_and_creates_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    nope = tmp_path / "nope" / "a" / "b"
    for args in (("add", "x"), ("search", "x"), ("status",), ("config",)):
        ran = octomem(home, "--project-root", str(nope), *args, ok=False)
        assert ran.code == 2, ran
        assert ran.err.strip().splitlines() == [
            f"error: --project-root {nope}: no such directory; see `octomem --help`"], ran.err
    assert not (tmp_path / "nope").exists()
    ui = octomem(home, "ui", "--project-root", str(nope), ok=False)
    assert ui.code == 2 and f"--project-root {nope}: no such directory" in ui.err


def test_a_project_root_that_is_a_file_says_so(tmp_path: Path) -> None:
    afile = tmp_path / "notes.txt"
    afile.write_text("not a folder\n")
    for args in (("status",), ("add", "x")):
        ran = octomem(tmp_path, "--project-root", str(afile), *args, ok=False)
        assert ran.code == 2 and ran.err.startswith(
            f"error: --project-root {afile}: not a directory"), ran.err
    assert afile.read_text() == "not a folder\n"


def test_the_mcp_server_refuses_a_missing_project_root(tmp_path: Path) -> None:
    nope = tmp_path / "nope"
    done = subprocess.run([sys.executable, "-m", "octomem.mcp_server", "--project-root",
                           str(nope)], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == \
        f"octomem: error: --project-root {nope}: no such directory"
    assert not nope.exists()


def test_export_keeps_an_existing_file_unless_forced(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    octomem(project, "add", "The kiwi fruit ripens in a paper bag")
    precious = tmp_path / "p.txt"
    precious.write_text("precious\n")
    ran = octomem(project, "export", "--scope", "local", str(precious), ok=False)
    assert ran.code == 1 and ran.err.strip() == (
        f"error: {precious} exists; pass --force to replace it, or `-` to write to stdout")
    assert precious.read_text() == "precious\n"
    folder = octomem(project, "export", str(tmp_path), "--force", ok=False)
    assert folder.code == 1 and f"{tmp_path} is a folder" in folder.err
    octomem(project, "export", "--scope", "local", str(precious), "--force")
    assert '"The kiwi fruit ripens in a paper bag"' in precious.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.txt", "project"]  # no part left
    assert "kiwi fruit" in octomem(project, "export", "-").out
    assert "--force" in octomem(project, "export", "--help").out


def test_a_failed_one_file_ingest_prints_only_its_error(tmp_path: Path) -> None:
    empty, good = tmp_path / "empty.md", tmp_path / "good.md"
    empty.write_text("")
    good.write_text("Deploy keys rotate every 90 days\n")
    alone = octomem(tmp_path, "ingest", str(empty), ok=False)
    assert alone.code == 1 and alone.out == ""
    assert alone.err.strip().splitlines()[-1] == f"error: {empty}: empty file"
    assert "added" not in alone.err
    both = octomem(tmp_path, "ingest", str(empty), str(good), ok=False)
    assert both.code == 1 and both.out.startswith("added 1, replaced 0, unchanged 0 documents")
    assert both.err.strip().splitlines()[-1] == f"error: {empty}: empty file"  # the same form


def test_a_malformed_chat_transcript_names_every_bad_line(tmp_path: Path) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text('{"text": "hi", "speaker": "ann"}\nnot json\n'
                    '{"speeker": "bob", "text": "yo"}\n[1]\n')
    ran = octomem(tmp_path, "ingest", str(chat), ok=False)
    assert ran.code == 1 and ran.out == ""
    assert ran.err.strip().splitlines()[-1] == (
        f"error: {chat}:2: not valid JSON: Expecting value at column 1; {chat}:3: unknown "
        "field 'speeker'; a chat turn has conversation, id, metadata, role, session, "
        f"speaker, text, time, title; {chat}:4: expected a JSON object, got list")
    many = tmp_path / "many.jsonl"
    many.write_text('{"text": "hi", "speaker": "ann"}\n' + "oops\n" * 25)
    err = octomem(tmp_path, "ingest", str(many), ok=False).err.strip().splitlines()[-1]
    assert err.count(f"{many}:") == 20 and err.endswith("; and 5 more bad lines")
    assert f"{many}:21:" in err and f"{many}:22:" not in err
    assert octomem(tmp_path, "search", "hi", "--json").json()["hits"] == []  # nothing stored
