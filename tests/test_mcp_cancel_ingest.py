"""Trial 18 H10: a cancelled MCP ``ingest`` ran to its end, was counted ``ok``, and the
session's next calls waited for it. Now the call is answered as cancelled at once and its
ingest stops before its next embedding batch; what it stored stays."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import anyio
import pytest
from mcp import Client
from served import Served
from test_mcp_ordering import GATED_EMBEDDER


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_a_cancelled_ingest_stops_at_its_next_batch(
        tmp_path: Path, install_test_plugin: Callable[[str, str], Path]) -> None:
    install_test_plugin("octomem_test_gated", GATED_EMBEDDER)
    gate = tmp_path / "gate"
    gate.mkdir()
    notes = tmp_path / "project" / "notes"
    notes.mkdir(parents=True)
    for n in range(600):  # more than one embedding batch; the first one waits at the gate
        word = "gatedingest " if n == 0 else ""
        (notes / f"n{n:03d}.md").write_text(f"{word}Note {n}: the rota changes on day {n}.\n")
    served = Served(tmp_path, "--http", "127.0.0.1:0", OCTOMEM_PIPELINE__EMBEDDER="gated",
                    TEST_GATE_DIR=str(gate))
    try:
        url = served.wait_for(r"MCP over streamable HTTP at (http://\S+/mcp)").group(1)
        async with Client(url, read_timeout_seconds=120) as client:
            with anyio.move_on_after(60) as waited:  # cancelled once the ingest is embedding
                async with anyio.create_task_group() as group:
                    group.start_soon(client.call_tool, "ingest", {"path_or_text": "notes"})
                    while not (gate / "entered").exists():
                        await anyio.sleep(0.05)
                    group.cancel_scope.cancel()  # the client sends notifications/cancelled
            assert not waited.cancelled_caught
            (gate / "release").touch()
            readings: list[int] = []  # until the first batch is written and nothing moves
            with anyio.fail_after(60):
                while len(readings) < 2 or readings[-1] != readings[-2] or readings[-1] == 600:
                    status = await client.call_tool("status", {})
                    local = status.structured_content["scopes"]["local"]
                    readings.append(local["chunks_without_vector"])
                    await anyio.sleep(1.0)  # unstopped, the rest embeds well within this
        assert served.wait_for(r"octomem\.calls: ingest (\w+)").group(1) == "cancelled"
        assert local["documents"] == 600  # stored before the embedding: kept
        assert 0 < readings[-1] < 600, readings  # stopped after its first batch(es)
    finally:
        (gate / "release").touch()
        served.stop()
