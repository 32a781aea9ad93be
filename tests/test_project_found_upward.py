"""Trial 11, finding 5: run from a subfolder of a project, every command uses the project's
``.octomem/`` (the nearest folder above holding one, as git finds its repository), never a
new, empty local scope in the subfolder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_run import octomem
from mcp import Client

from octomem.engine.project import find_project_root
from octomem.mcp_server.server import create_server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """``proj/`` with a stored statement and a note, and the subfolder ``proj/notes/deep``."""
    proj = tmp_path / "proj"
    (proj / "notes" / "deep").mkdir(parents=True)
    (proj / "notes" / "rollback.md").write_text("# Rollback\nRun deploy --undo to roll back.\n")
    octomem(proj, "add", "Deploys happen on Tuesdays only", "--kind", "FACT")
    assert (proj / ".octomem").is_dir()
    return proj


def test_a_search_in_a_subfolder_finds_the_projects_memory(project: Path) -> None:
    ran = octomem(project / "notes" / "deep", "search", "Tuesdays deploys")
    assert "Deploys happen on Tuesdays only" in ran.out
    assert "local" in ran.out
    assert not (project / "notes" / "deep" / ".octomem").exists()


def test_writes_in_a_subfolder_go_to_the_project_and_say_so(project: Path) -> None:
    notes = project / "notes"
    ran = octomem(notes, "add", "The staging database is wiped every Sunday")
    assert f"note: the local scope is {project / '.octomem'}" in ran.err
    ran = octomem(notes, "ingest", "rollback.md")  # a relative path still starts here
    assert "added 1" in ran.out, ran.out
    assert not (notes / ".octomem").exists()
    found = octomem(project, "search", "roll back deploy undo").out
    assert "Rollback" in found or "deploy --undo" in found
    assert "Sunday" in octomem(project, "search", "staging database wiped").out


def test_status_names_the_project_found_above(project: Path) -> None:
    out = octomem(project / "notes", "status").out
    assert out.startswith(f"project {project}\n"), out
    assert f"the nearest folder above the current one, {project / 'notes'}" in out
    assert "none yet" not in out.split("global")[0]
    here = octomem(project, "status").out
    assert "nearest folder above" not in here


def test_the_project_config_above_is_read(project: Path) -> None:
    (project / ".octomem" / "config.toml").write_text("[retrieval]\ntop_k = 3\n")
    out = octomem(project / "notes", "config", "retrieval.top_k").out
    assert "3" in out and str(project / ".octomem" / "config.toml") in out


def test_without_a_project_above_the_current_folder_is_the_project(tmp_path: Path) -> None:
    lone = tmp_path / "lone" / "sub"
    lone.mkdir(parents=True)
    octomem(lone, "add", "A fact of its own")
    assert (lone / ".octomem").is_dir() and not (tmp_path / "lone" / ".octomem").exists()
    assert find_project_root(lone) == lone.resolve()


def test_an_explicit_project_root_is_not_searched_upward(project: Path) -> None:
    notes = project / "notes"
    ran = octomem(notes, "--project-root", str(notes), "search", "Tuesdays deploys")
    assert "Tuesdays only" not in ran.out and "no hits" in ran.out


def test_the_search_stops_below_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / ".octomem").mkdir(parents=True)
    (home / "code" / "app").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    assert find_project_root(home / "code" / "app") == (home / "code" / "app").resolve()
    assert find_project_root(home) == home.resolve()
    (home / "code" / ".octomem").mkdir()
    assert find_project_root(home / "code" / "app") == (home / "code").resolve()


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_mcp_server_started_in_a_subfolder_serves_the_project(
        project: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project / "notes")
    server = create_server(overrides={"data_dir": str(data_dir),
                                      "pipeline": {"embedder": "hashing"}})
    async with Client(server, read_timeout_seconds=60) as client:
        status = (await client.call_tool("status", {})).structured_content
        assert status is not None and status["project_root"] == str(project.resolve())
        await client.call_tool("remember", {"text": "The VPN endpoint is vpn1.example.com"})
    assert not (project / "notes" / ".octomem").exists()
    assert os.listdir(project / ".octomem")


def test_an_import_notes_the_project_only_when_it_goes_to_the_local_scope(
        project: Path) -> None:
    notes = project / "notes"
    octomem(project, "add", "The account prefers short answers", "--scope", "global")
    octomem(project, "export", "--scope", "global", str(project / "global.jsonl"))
    octomem(project, "export", "--scope", "local", str(project / "local.jsonl"))
    ran = octomem(notes, "import", str(project / "global.jsonl"))
    assert "note: the local scope" not in ran.err, ran.err
    ran = octomem(notes, "import", str(project / "local.jsonl"))
    assert f"note: the local scope is {project / '.octomem'}" in ran.err, ran.err
    assert not (notes / ".octomem").exists()
