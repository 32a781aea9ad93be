"""Trial 13 F12: a read of a scope that does not exist creates nothing.

Before, every read (``recall``, ``search``, ``status`` after one, ``session-start``, the
MCP server's start) opened the global scope and so created its SQLite file, and
``ScopeSet.exists("global")`` was always true. Now a scope exists when its store does;
reads answer empty and say why, and the first write creates the store.
"""

from __future__ import annotations

import os
from pathlib import Path

from cli_run import octomem
from mcp_stdio import server_env, stdio_client

from octomem.engine.manager import load_registry
from octomem.engine.memory.facade import Memory
from octomem.engine.settings import load_settings


def _files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


def test_cli_reads_of_a_fresh_install_create_no_file(tmp_path: Path) -> None:
    project, data = tmp_path / "proj", Path(os.environ["XDG_DATA_HOME"]) / "octomem"
    project.mkdir()
    for args in (["recall", "anything"], ["search", "anything", "--json"], ["status"],
                 ["status", "--json"], ["session-start"], ["verify"]):
        ran = octomem(project, *args)
        assert _files(data) == [] and _files(project) == [], (args, _files(data))
    assert "nothing is stored in the local and global scopes" in \
        octomem(project, "recall", "anything").out
    assert octomem(project, "status", "--json").json()["scopes"]["global"]["exists"] is False
    ran = octomem(project, "export", "--scope", "global", "-", ok=False)
    assert ran.code == 2 and "the global scope holds no memory yet" in ran.err, ran.err
    assert _files(data) == []
    octomem(project, "add", "The user prefers tabs", "--scope", "global")
    assert (data / "octomem.sqlite3").is_file()
    assert "prefers tabs" in octomem(project, "recall", "tabs").out


def test_a_global_folder_without_a_store_is_not_a_scope(tmp_path: Path) -> None:
    """An existing folder (``--global-root`` at a folder of the user's, a project's
    ``.octomem/`` holding only its config.toml) is not a store either."""
    project, elsewhere = tmp_path / "proj", tmp_path / "mine"
    (project / ".octomem").mkdir(parents=True)
    (project / ".octomem" / "config.toml").write_text("[retrieval]\ntop_k = 5\n")
    elsewhere.mkdir()
    loaded = load_settings(overrides={"pipeline": {"embedder": "hashing"}},
                           project_root=project)
    memory = Memory(loaded, load_registry(), project, elsewhere)
    try:
        assert not memory.scopes.exists("global") and not memory.scopes.exists("local")
        assert memory.recall("anything").hits == []
        assert memory.scopes.get("global") is None and memory.scopes.opened() == []
        assert _files(elsewhere) == [] and _files(project) == [".octomem",
                                                               ".octomem/config.toml"]
        memory.remember("Deploys happen on Tuesdays", scope="global")
        assert memory.scopes.exists("global") and not memory.scopes.exists("local")
        assert (elsewhere / "octomem.sqlite3").is_file()
    finally:
        memory.close()


def test_the_mcp_server_starts_and_reads_without_creating_the_global_store(
        tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    data = Path(server_env(tmp_path)["OCTOMEM_DATA_DIR"])
    with stdio_client(tmp_path, project) as client:
        answer = client.ok("recall", query="what does the user prefer?")
        assert answer["hits"] == [] and "nothing is stored" in str(answer), answer
        status = client.ok("status")
        assert status["scopes"]["global"]["exists"] is False, status
        assert status["scopes"]["global"]["not_created"].startswith(
            "no store yet: the first write into this scope"), status
        assert status["arms"]["storage"] == "sqlite" and status["embedder_model"], status
        assert "Nothing is remembered yet" in client.read("octomem://session-start")
        client.read("octomem://memory/global")
        assert _files(data) == [] and _files(project) == []
        client.ok("remember", text="The user prefers tabs for indentation", scope="global")
        assert (data / "octomem.sqlite3").is_file()
        hits = client.ok("recall", query="indentation preference")["hits"]
        assert hits and hits[0]["scope"] == "global", hits
