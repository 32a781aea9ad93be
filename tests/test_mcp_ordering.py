"""Tool calls sent back to back without waiting are answered as if run in arrival order:
a real server over stdio, raw pipelined JSON-RPC lines and the SDK's client; over HTTP,
in each session's own order, so one client's long write does not hold back another's
read."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult
from mcp_stdio import RawServer, server_args, server_env
from served import Served
from word_hash_embedder import WORD_HASH_METHODS

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


def test_a_burst_of_answers_read_late_is_read_in_full(tmp_path: Path) -> None:
    """Pipelined pings read only once the server has written their answers (as a test
    process descheduled on a loaded machine reads them): every answer is read, in order.
    ``RawServer.receive`` once waited on the pipe while the rest sat in Python's read
    buffer: 1 of 20 here, "only 17 of 18 replies" above in CI at load 4-5."""
    project = tmp_path / "project"
    project.mkdir()
    server = RawServer(tmp_path, project)
    try:
        server.send_line("\n".join(json.dumps({"jsonrpc": "2.0", "id": 100 + n,
                                                "method": "ping"}) for n in range(20)))
        time.sleep(1.0)  # the answers pile up in the pipe (a later one only sharpens it)
        ids = [reply["id"] for reply in _replies(server, 20)]
    finally:
        server.close()
    assert ids == list(range(100, 120))


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


# ---- over HTTP: each session in its own order ------------------------------------------

#: An embedder whose ``embed_documents`` of a text holding :data:`GATE_WORD` stops at a gate:
#: it creates ``$TEST_GATE_DIR/entered`` and waits for ``$TEST_GATE_DIR/release``.
#: So an ingest is "slow" for exactly as long as the test wants, with no timing guess.
GATED_EMBEDDER = '''
import os, time, zlib
from pathlib import Path
import numpy as np
from octomem.engine.arms import ArmSpec
from octomem.engine.hookspecs import hookimpl

GATE_WORD = "gatedingest"


class GatedEmbedder:
    dim, max_tokens, name, model_id = 64, 254, "gated", "gated-test-v1"

    def load(self):
        pass
''' + WORD_HASH_METHODS + '''
    def embed_documents(self, texts):
        if any(GATE_WORD in t for t in texts):
            gate = Path(os.environ["TEST_GATE_DIR"])
            (gate / "entered").touch()
            deadline = time.monotonic() + 300
            while not (gate / "release").exists() and time.monotonic() < deadline:
                time.sleep(0.02)
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return np.stack([self._one(t) for t in texts])

    def embed_query(self, text):
        return self._one(text)


@hookimpl
def octomem_register_embedders():
    return [ArmSpec(kind="embedder", name="gated", factory=lambda o, c: GatedEmbedder())]
'''


def _structured(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


class _GatedIngest:
    """Two SDK clients of one HTTP server; A's ``ingest`` held inside its embedding until
    :meth:`release` (a gate file the test plugin waits on)."""

    def __init__(self, gate: Path, a: Client, b: Client) -> None:
        self.gate, self.a, self.b = gate, a, b
        self.finished: list[str] = []
        self.answers: dict[str, dict[str, Any]] = {}

    async def a_call(self, key: str, tool: str, arguments: dict[str, Any]) -> None:
        self.answers[key] = _structured(await self.a.call_tool(tool, arguments))
        self.finished.append(key)

    async def start(self, group: Any) -> None:
        """Start A's ingest in ``group`` and return once it waits at the gate."""
        group.start_soon(self.a_call, "a ingest", "ingest", {
            "path_or_text": "gatedingest: llamas and alpacas graze on the north field",
            "title": "llamas"})
        with anyio.fail_after(120):
            while not (self.gate / "entered").exists():
                await anyio.sleep(0.05)

    def release(self) -> None:
        (self.gate / "release").touch()


@asynccontextmanager
async def _gated_ingest(tmp_path: Path, install_test_plugin: Callable[[str, str], Path],
                        mode: str) -> AsyncIterator[_GatedIngest]:
    """A server with the gated embedder, clients A and B, B's statement stored first."""
    install_test_plugin("octomem_test_gated", GATED_EMBEDDER)
    gate = tmp_path / "gate"
    gate.mkdir()
    served = Served(tmp_path, "--http", "127.0.0.1:0", OCTOMEM_PIPELINE__EMBEDDER="gated",
                    TEST_GATE_DIR=str(gate))
    try:
        url = served.wait_for(r"MCP over streamable HTTP at (http://\S+/mcp)").group(1)
        async with Client(url, read_timeout_seconds=300, mode=mode) as a, \
                Client(url, read_timeout_seconds=300, mode=mode) as b:
            _structured(await b.call_tool("remember", {"text": "Upload parts are 8 MiB each"}))
            yield _GatedIngest(gate, a, b)
    finally:
        (gate / "release").touch()
        served.stop()


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_one_clients_long_ingest_does_not_hold_back_another_clients_recall(
    tmp_path: Path, install_test_plugin: Callable[[str, str], Path], mode: str,
) -> None:
    """Trial 12 F3: client A's ingest is held inside its embedding (a gate the test opens);
    meanwhile client B's recall is answered. With sessions (``legacy``: the initialize
    handshake, ``mcp-session-id``), A's own recall, sent after its ingest, still waits for
    it; a 2026-07-28 request belongs to no session and waits for nothing."""
    async with _gated_ingest(tmp_path, install_test_plugin, mode) as run:
        async with anyio.create_task_group() as group:
            await run.start(group)
            group.start_soon(run.a_call, "a recall", "recall",
                             {"query": "llamas alpacas north field", "top_k": 3})
            with anyio.fail_after(60):  # generous: it needs no wait at all
                answer = _structured(await run.b.call_tool(
                    "recall", {"query": "upload parts size", "top_k": 2}))
            run.finished.append("b recall")
            assert answer["hits"] and "8 MiB" in answer["hits"][0]["text"]
            assert "a ingest" not in run.finished  # it is still at the gate
            if mode == "legacy":  # A's recall waits for A's ingest (its session's write)
                assert run.finished == ["b recall"]
            run.release()
    assert sorted(run.finished) == ["a ingest", "a recall", "b recall"]
    assert "llamas" in run.answers["a recall"]["hits"][0]["text"]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_one_clients_long_ingest_does_not_hold_back_another_clients_writes(
    tmp_path: Path, install_test_plugin: Callable[[str, str], Path], mode: str,
) -> None:
    """Trial 21 F1: client A's ingest is held inside its embedding (a gate the test opens);
    meanwhile client B's ``remember`` and ``forget`` are answered and stored (they waited
    for A's whole ingest: 29-40 s for 600 files). With sessions, A's own ``remember``, sent
    after its ingest, still waits for it; at the end everything is stored."""
    async with _gated_ingest(tmp_path, install_test_plugin, mode) as run:
        b = run.b
        async with anyio.create_task_group() as group:
            await run.start(group)
            group.start_soon(run.a_call, "a remember", "remember",
                             {"text": "The llama shearing is in May"})
            with anyio.fail_after(120):  # generous: it waits for no ingest
                stored = _structured(await b.call_tool(
                    "remember", {"text": "The kiosk build uses Node 20"}))
                run.finished.append("b remember")
                gone = _structured(await b.call_tool(
                    "forget", {"text_or_id": "Upload parts are 8 MiB each"}))
                run.finished.append("b forget")
            assert stored["text"] == "The kiosk build uses Node 20"
            assert gone["forgotten"]["text"] == "Upload parts are 8 MiB each"
            assert "a ingest" not in run.finished  # it is still at the gate
            if mode == "legacy":  # A's remember waits for A's ingest (its session's write)
                assert run.finished == ["b remember", "b forget"]
            run.release()
        found = _structured(await b.call_tool(
            "recall", {"query": "kiosk build Node version", "top_k": 3}))
        llamas = _structured(await b.call_tool(
            "recall", {"query": "llamas alpacas north field", "top_k": 3}))
        shearing = _structured(await b.call_tool(
            "recall", {"query": "when is the llama shearing", "top_k": 3}))
    assert sorted(run.finished) == ["a ingest", "a remember", "b forget", "b remember"]
    ingest = run.answers["a ingest"]
    assert len(ingest["added"]) == 1 and ingest["embedded"] == ingest["chunks"] == 1
    assert "Node 20" in found["hits"][0]["text"]
    assert "alpacas" in llamas["hits"][0]["text"]
    assert any("shearing is in May" in hit["text"] for hit in shearing["hits"])


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
