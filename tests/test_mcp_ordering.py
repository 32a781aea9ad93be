"""Tool calls sent back to back without waiting are answered as if run in arrival order:
a real server over stdio, raw pipelined JSON-RPC lines and the SDK's client."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp_stdio import RawServer, server_args, server_env

pytestmark = pytest.mark.slow


def _call(request_id: int, tool: str, arguments: dict[str, object]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
                       "params": {"name": tool, "arguments": arguments}})


def _replies(server: RawServer, count: int) -> list[dict[str, object]]:
    replies = []
    for _ in range(count):
        reply = server.receive(timeout=60)
        assert reply is not None, f"only {len(replies)} of {count} replies"
        replies.append(reply)
    return replies


def test_pipelined_remember_then_forget_and_recall_see_the_write(tmp_path: Path) -> None:
    """The trial's case, right after start-up (the model still warming): remember (id 4),
    forget of the same text (id 5), in one burst; then pairs remember/recall."""
    project = tmp_path / "project"
    project.mkdir()
    server = RawServer(tmp_path, project)
    try:
        lines = [_call(4, "remember", {"text": "raw client fact"}),
                 _call(5, "forget", {"text_or_id": "raw client fact"})]
        for n in range(8):
            lines.append(_call(10 + 2 * n, "remember", {"text": f"pipelined fact number {n}"}))
            lines.append(_call(11 + 2 * n, "recall", {"query": f"pipelined fact number {n}",
                                                      "top_k": 1}))
        server.send_line("\n".join(lines))
        replies = {reply["id"]: reply for reply in _replies(server, len(lines))}
    finally:
        server.close()
    forgot = replies[5]["result"]
    assert not forgot["isError"], forgot["content"]
    assert forgot["structuredContent"]["forgotten"]["text"] == "raw client fact"
    for n in range(8):
        hits = replies[11 + 2 * n]["result"]["structuredContent"]["hits"]
        assert hits and hits[0]["text"] == f"pipelined fact number {n}", (n, hits)


@pytest.mark.anyio
async def test_sdk_client_concurrent_calls_run_in_the_order_sent(tmp_path: Path) -> None:
    """The SDK's own client, calls started together: each forget finds the statement the
    remember sent just before it stored."""
    project = tmp_path / "project"
    project.mkdir()
    params = StdioServerParameters(command=sys.executable, args=server_args(project),
                                   env=server_env(tmp_path))
    results: dict[str, object] = {}
    async with Client(params, read_timeout_seconds=60) as client:
        async def call(key: str, tool: str, arguments: dict[str, object]) -> None:
            results[key] = await client.call_tool(tool, arguments)

        async with anyio.create_task_group() as group:
            for n in range(5):
                group.start_soon(call, f"remember{n}", "remember", {"text": f"sdk fact {n}"})
                await anyio.sleep(0)  # the request is written before the next starts
                group.start_soon(call, f"forget{n}", "forget", {"text_or_id": f"sdk fact {n}"})
                await anyio.sleep(0)
        status = await client.call_tool("status", {})
    for n in range(5):
        forgot = results[f"forget{n}"]
        assert not forgot.is_error, forgot.content
        assert forgot.structured_content["forgotten"]["text"] == f"sdk fact {n}"
    assert not status.is_error


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
