"""The MCP server over stdio, as a real client starts it, with the PostgreSQL arms selected
by environment variables only (``OCTOMEM_PIPELINE__STORAGE=postgres`` ...)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("octomem_postgres")

import anyio  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.types import CallToolResult  # noqa: E402

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def server_params(tmp_path: Path, uri: str, *args: str) -> StdioServerParameters:
    """How an MCP client would start the server: every directory inside ``tmp_path``, the
    PostgreSQL arms chosen in the environment."""
    home = tmp_path / "home"
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "octomem.mcp_server", *args],
        env={
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "HF_HUB_OFFLINE": "1",
            "OCTOMEM_DATA_DIR": str(tmp_path / "data"),
            "OCTOMEM_PIPELINE__STORAGE": "postgres",
            "OCTOMEM_PIPELINE__KEYWORD": "postgres-fts",
            "OCTOMEM_PIPELINE__SEMANTIC": "pgvector",
            "OCTOMEM_PIPELINE__EMBEDDER": "hashing",
            "OCTOMEM_ARMS__POSTGRES__URI": uri,
        },
    )


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result: CallToolResult = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def test_remember_recall_forget_over_stdio(tmp_path: Path, postgres_uri: str) -> None:
    project = tmp_path / "project"
    project.mkdir()
    params = server_params(tmp_path, postgres_uri, "--project-root", str(project))
    with anyio.fail_after(120):
        async with Client(params, read_timeout_seconds=60) as client:
            status = await call(client, "status")
            assert status["arms"]["storage"] == "postgres"
            stored = await call(client, "remember", kind="FACT",
                                text="The CI pipeline runs on self-hosted runners")
            assert stored["scope"] == "local"
            answer = await call(client, "recall", query="where does CI run", explain=True)
            top = answer["hits"][0]
            assert top["id"] == stored["id"] and top["score"] > 0 and top["scope"] == "local"
            assert {"postgres-fts", "pgvector"} <= set(top["arms"])
            gone = await call(client, "forget", text_or_id=stored["id"], reason="moved to GitHub")
            assert gone["forgotten"]["id"] == stored["id"] and gone["reason"] == "moved to GitHub"
            assert (await call(client, "recall", query="where does CI run"))["hits"] == []


async def test_two_projects_one_global_memory(tmp_path: Path, postgres_uri: str) -> None:
    """Two server processes, two projects, one global scope: the scopes are schemas."""
    global_root = tmp_path / "me"
    alpha, beta = tmp_path / "alpha", tmp_path / "beta"
    alpha.mkdir()
    beta.mkdir()

    def params(project: Path) -> StdioServerParameters:
        return server_params(tmp_path, postgres_uri, "--project-root", str(project),
                             "--global-root", str(global_root))

    with anyio.fail_after(180):
        async with Client(params(alpha), read_timeout_seconds=60) as a, \
                Client(params(beta), read_timeout_seconds=60) as b:
            pref = await call(a, "remember", text="The user prefers answers in British English",
                              scope="global", kind="PREFERENCE")
            fact_a = await call(a, "remember", text="The alpha service deploys with make ship",
                                kind="FACT")
            fact_b = await call(b, "remember", text="The beta service deploys with make ship-beta",
                                kind="FACT")
            for client, own, other in ((a, fact_a, fact_b), (b, fact_b, fact_a)):
                english = await call(client, "recall", query="which English does the user prefer")
                assert english["hits"][0]["id"] == pref["id"]
                assert english["hits"][0]["scope"] == "global"
                deploy = await call(client, "recall", query="how does the service deploy")
                ids = {h["id"] for h in deploy["hits"]}
                assert own["id"] in ids and other["id"] not in ids

            old = await call(a, "remember", text="The alpha database is PostgreSQL 15",
                             kind="FACT", event_time="2024-01-10")
            new = await call(a, "remember", text="The alpha database is PostgreSQL 17",
                             kind="FACT", event_time="2025-02-01", supersedes=old["id"])
            assert new["superseded"]["id"] == old["id"]
            now = await call(a, "recall", query="alpha database version")
            assert now["hits"][0]["id"] == new["id"]
            then = await call(a, "recall", query="alpha database version", as_of="2024-06-01")
            assert then["hits"][0]["id"] == old["id"] and then["hits"][0]["current"] is False

            await call(b, "remember", text="Handoff: beta tests half done", kind="HANDOFF")
            latest = await call(b, "remember", text="Handoff: beta tests done, release next",
                                kind="HANDOFF")
            assert [r["text"] for r in latest["replaced"]] == ["Handoff: beta tests half done"]

            local_a = (await a.read_resource("octomem://memory/local")).contents[0]
            assert "PostgreSQL 17" in local_a.text and "PostgreSQL 15" not in local_a.text
            assert "make ship-beta" not in local_a.text
