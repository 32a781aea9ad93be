"""``python -m octomem.mcp_server`` started over stdio, as a real MCP client starts it."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

#: Generous bound for spawn + imports + initialize + tools/list (measured well under it).
STARTUP_LIMIT_S = 10.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def server_params(tmp_path: Path, **env: str) -> StdioServerParameters:
    """How an MCP client would start the server, with every directory inside ``tmp_path``."""
    home = tmp_path / "home"
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "octomem.mcp_server"],
        env={
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "HF_HUB_OFFLINE": "1",
            "OCTOMEM_DATA_DIR": str(tmp_path / "data"),
            **env,
        },
    )


def structured(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def test_stdio_remember_recall_forget(tmp_path: Path) -> None:
    params = server_params(tmp_path, OCTOMEM_PIPELINE__EMBEDDER="hashing")
    with anyio.fail_after(120):
        async with Client(params, read_timeout_seconds=60) as client:
            stored = structured(await client.call_tool(
                "remember", {"text": "The CI pipeline runs on self-hosted runners", "kind": "FACT"}
            ))
            answer = structured(await client.call_tool(
                "recall", {"query": "where does CI run", "explain": True}
            ))
            top = answer["hits"][0]
            assert top["id"] == stored["id"] and top["score"] > 0
            assert {"fts5", "sqlite-vec"} <= set(top["arms"])
            assert structured(await client.call_tool(
                "forget", {"id_or_text": stored["id"]}
            ))["id"] == stored["id"]
            after = structured(await client.call_tool("recall", {"query": "where does CI run"}))
            assert after["hits"] == []
    assert (tmp_path / "data").is_dir()


async def test_stdio_lists_tools_at_once_with_the_real_model(tmp_path: Path) -> None:
    """The default fastembed embedder: tools/list must not wait for the model to load."""
    params = server_params(tmp_path)
    with anyio.fail_after(180):
        start = time.perf_counter()
        async with Client(params, read_timeout_seconds=120) as client:
            initialized = time.perf_counter() - start
            tools = (await client.list_tools()).tools
            listed = time.perf_counter() - start
            status = structured(await client.call_tool("status", {}))
            state_at_listing = status["model_state"]
            while status["model_state"] in ("starting", "loading"):
                await anyio.sleep(0.1)
                status = structured(await client.call_tool("status", {}))
            ready = time.perf_counter() - start
            answer = structured(await client.call_tool("recall", {"query": "anything at all"}))
    print(
        f"\nstdio startup with fastembed: initialize {initialized:.2f} s, tools/list "
        f"{listed:.2f} s, model state then {state_at_listing!r}, model ready at {ready:.2f} s "
        f"(load {status['model_load_seconds']} s)"
    )
    assert {t.name for t in tools} == {"remember", "recall", "forget", "status"}
    assert listed < STARTUP_LIMIT_S
    assert status["arms"]["embedder"] == "fastembed" and status["model_state"] == "ready"
    assert answer["semantic_available"] and answer["arms_unavailable"] == {}
