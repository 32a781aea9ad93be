"""A store deleted or replaced under a running server (trial 12, F8): ``rm -rf .octomem``
or ``git clean -fdx`` while an MCP server has the file open. No write answers "stored" for
data no file holds: the scope is reopened at its path (a fresh store, as the first write
into a new project creates it), nothing of the deleted store is served, and a write that
races the deletion is refused in one line."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from cli_run import octomem
from mcp_stdio import stdio_client

from octomem.engine.errors import StoreGoneError
from octomem.plugins.sqlite.storage import SqliteStorage

pytestmark = pytest.mark.slow


def _texts(project: Path, query: str) -> list[str]:
    return [h["text"] for h in octomem(project, "search", query, "--scope", "local",
                                       "--json").json()["hits"]]


def test_rm_rf_under_a_running_server_reopens_a_fresh_store(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    octomem(project, "add", "rmproj first fact: the gopher rota")
    with stdio_client(tmp_path, project) as mcp:
        hits = mcp.ok("recall", query="gopher rota", scope="local")["hits"]
        assert [h["text"] for h in hits] == ["rmproj first fact: the gopher rota"]
        shutil.rmtree(project / ".octomem")
        status = mcp.ok("status")["scopes"]["local"]
        assert status["exists"] is False, status
        assert mcp.ok("recall", query="gopher rota")["hits"] == []
        mcp.ok("remember", text="written after the folder was deleted: the mole schedule")
        mcp.ok("remember", text="second write after deletion: the vole plan")
        status = mcp.ok("status")["scopes"]["local"]
        assert (status["exists"], status["documents"]) == (True, 2), status
        hits = mcp.ok("recall", query="gopher rota mole schedule", scope="local")["hits"]
        texts = [h["text"] for h in hits]
        assert "written after the folder was deleted: the mole schedule" in texts
        assert "rmproj first fact: the gopher rota" not in texts
    # what the server answered as stored is in the file at the path, read by another process
    assert (project / ".octomem" / "octomem.sqlite3").is_file()
    assert _texts(project, "vole plan") == ["second write after deletion: the vole plan"]
    assert _texts(project, "gopher rota") == []


def test_store_replaced_under_a_running_server_serves_the_new_file(tmp_path: Path) -> None:
    project, other = tmp_path / "project", tmp_path / "other"
    project.mkdir()
    other.mkdir()
    octomem(project, "add", "The heron nests by the weir")
    octomem(other, "add", "The otter fishes below the mill")
    with stdio_client(tmp_path, project) as mcp:
        assert mcp.ok("recall", query="heron weir", scope="local")["hits"]
        os.replace(other / ".octomem" / "octomem.sqlite3",
                   project / ".octomem" / "octomem.sqlite3")  # e.g. restored from a backup
        assert mcp.ok("recall", query="heron weir", scope="local")["hits"] == []
        hits = mcp.ok("recall", query="otter mill", scope="local")["hits"]
        assert [h["text"] for h in hits] == ["The otter fishes below the mill"]
        mcp.ok("remember", text="The kingfisher perches on the sluice")
    assert _texts(project, "kingfisher sluice") == ["The kingfisher perches on the sluice"]


def test_a_write_racing_the_deletion_is_refused_in_one_line(tmp_path: Path) -> None:
    store = tmp_path / "scope" / "octomem.sqlite3"
    storage = SqliteStorage(store)
    try:
        with storage.transaction() as tx:
            storage.set_meta(tx, "before", "1")
        assert storage.gone() is None
        shutil.rmtree(store.parent)
        assert storage.gone() == f"the store {store} was deleted while octomem had it open"
        with pytest.raises(StoreGoneError) as raised, storage.transaction() as tx:
            storage.set_meta(tx, "after", "1")  # pragma: no cover - never reached
        assert str(raised.value).startswith(
            f"the store {store} was deleted while octomem had it open: nothing was written")
        assert "\n" not in str(raised.value)
    finally:
        storage.close()


def test_a_store_emptied_in_place_is_named_so_not_blamed_on_a_lock(tmp_path: Path) -> None:
    """trial 16 F22: ``: > .octomem/octomem.sqlite3`` under a running server made the next
    calls wait 5 s each and fail with "another process held its write lock" (no other
    process existed; a recall writes nothing of its own). The file emptied in place (same
    inode) is now seen as changed, like a deleted or replaced one: the scope is reopened
    at its path, and every call answers."""
    project = tmp_path / "project"
    project.mkdir()
    store = project / ".octomem" / "octomem.sqlite3"
    with stdio_client(tmp_path, project) as mcp:
        mcp.ok("remember", text="The deploy key lives in vault at secret/deploy", kind="FACT")
        mcp.ok("remember", text="CI runs on buildkite", kind="FACT")
        assert mcp.ok("recall", query="what CI do we use?", scope="local")["hits"]
        with store.open("r+b") as fh:
            fh.truncate(0)  # in place: the same file, no longer a database
        for _ in range(3):  # each from whichever worker thread the server uses
            answer = mcp.call("recall", {"query": "what CI do we use?"})
            assert not answer.is_error, answer.content
        mcp.ok("remember", text="After the truncation: staging is heron", kind="FACT")
        local = mcp.ok("status")["scopes"]["local"]
        assert local["exists"] is True and local["unreadable"] is None, local
        texts = [h["text"] for h in mcp.ok("recall", query="staging", scope="local")["hits"]]
        assert "After the truncation: staging is heron" in texts


def test_an_emptied_store_is_gone_for_the_storage(tmp_path: Path) -> None:
    store = tmp_path / "scope" / "octomem.sqlite3"
    storage = SqliteStorage(store)
    try:
        assert storage.gone() is None
        os.truncate(store, 0)
        assert storage.gone() == (
            f"the store {store} was emptied (0 bytes) by another program while octomem had "
            "it open: it is no longer a database")
        with pytest.raises(StoreGoneError), storage.transaction() as tx:
            storage.set_meta(tx, "after", "1")  # pragma: no cover - never reached
    finally:
        storage.close()
