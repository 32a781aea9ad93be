"""The CLI's memory commands with scopes (the current directory is the project)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from typer.testing import CliRunner

from octomem.engine.cli import app


@pytest.fixture
def octomem(tmp_path: Path) -> Any:
    """``octomem(*args)``: run the CLI with the hashing embedder and a temporary global root."""
    runner = CliRunner()
    base = ["--set", "pipeline.embedder=hashing", "--global-root", str(tmp_path / "global")]

    def run(*args: str, ok: bool = True) -> Any:
        result = runner.invoke(app, [*base, *args], env={"COLUMNS": "200"})
        if ok:
            assert result.exit_code == 0, (result.output, result.exception)
        return result

    return run


def _json(result: Any) -> Any:
    return json.loads(result.stdout)  # stderr may say where a store was created


def test_add_goes_local_and_search_sees_both_scopes(octomem: Any) -> None:
    local = _json(octomem("add", "The repo uses ruff for linting", "--kind", "FACT", "--json"))
    glob = _json(octomem("add", "The user prefers ruff over flake8", "--scope", "global",
                         "--json"))
    assert (local["scope"], glob["scope"]) == ("local", "global")
    assert (Path.cwd() / ".octomem").is_dir()
    both = _json(octomem("search", "ruff", "--json"))
    assert {h["scope"] for h in both["hits"]} == {"local", "global"}
    only = _json(octomem("search", "ruff", "--scope", "global", "--json"))
    assert [h["id"] for h in only["hits"]] == [glob["id"]]
    table = octomem("search", "ruff linting", "--explain").output
    assert "scope" in table and "fts5" in table and "local, global" in table
    status = octomem("status").output
    assert "local" in status and "global" in status and str(Path.cwd()) in status
    none = octomem("--set", "pipeline.semantic=", "search", "zzzqqq", "--scope", "global").output
    assert "no hits for 'zzzqqq'" in none and "scopes: global" in none


def test_supersede_as_of_and_forget_from_the_cli(octomem: Any) -> None:
    old = _json(octomem("add", "Staging runs Postgres 14", "--event-time", "2024-01-01",
                        "--json"))
    new = _json(octomem("add", "Staging runs Postgres 16", "--event-time", "2025-01-01",
                        "--supersedes", old["id"], "--json"))
    assert new["superseded"]["id"] == old["id"]
    then = _json(octomem("search", "staging postgres", "--as-of", "2024-06-30", "--json"))
    assert [h["id"] for h in then["hits"]] == [old["id"]]
    octomem("add", "Staging runs Postgres 16", "--scope", "global")
    ambiguous = octomem("forget", "Staging runs Postgres 16", ok=False)
    assert ambiguous.exit_code == 1 and new["id"] in ambiguous.output
    gone = _json(octomem("forget", new["id"], "--reason", "wrong host", "--json"))
    assert gone["forgotten"]["id"] == new["id"] and gone["reason"] == "wrong host"


def test_the_mcp_tool_names_work_as_listed_aliases(octomem: Any) -> None:
    stored = _json(octomem("remember", "Deploys run on Fridays", "--json"))
    hits = _json(octomem("recall", "when do deploys run", "--json"))["hits"]
    assert [h["id"] for h in hits] == [stored["id"]]
    commands = re.findall(r"^│ (\w+) ", octomem("--help").output.split("Commands")[1], re.M)
    assert {"add", "search", "remember", "recall"} <= set(commands)  # the README uses them


def test_ingest_into_a_scope(octomem: Any, tmp_path: Path) -> None:
    notes = Path.cwd() / "notes.md"
    notes.write_text("# Runbook\n\nRestart the worker with systemctl restart worker.\n")
    assert "added 1" in octomem("ingest", str(notes)).output
    assert "unchanged 1" in octomem("ingest", str(notes)).output
    assert "added 1" in octomem("ingest", str(notes), "--scope", "global").output
    hits = _json(octomem("search", "restart the worker", "--json"))["hits"]
    assert {h["scope"] for h in hits} == {"local"}  # the identical global copy collapsed


@pytest.mark.slow
@pytest.mark.anyio
async def test_octomem_serve_binds_the_project_root(tmp_path: Path) -> None:
    project = tmp_path / "bound"
    project.mkdir()
    script = Path(sys.executable).with_name("octomem")
    params = StdioServerParameters(
        command=str(script), cwd=str(tmp_path),
        args=["--set", "pipeline.embedder=hashing", "serve", "--project-root", str(project),
              "--global-root", str(tmp_path / "global")],
        env={"HOME": str(tmp_path / "home"), "HF_HUB_OFFLINE": "1"},
    )
    with anyio.fail_after(120):
        async with Client(params, read_timeout_seconds=60) as client:
            result = await client.call_tool("remember", {"text": "Bound to one project"})
            assert result.structured_content["scope"] == "local"
            status = (await client.call_tool("status", {})).structured_content
            assert status["project_root"] == str(project.resolve())
    assert (project / ".octomem").is_dir() and not (tmp_path / ".octomem").exists()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
