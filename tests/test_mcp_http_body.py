"""The largest MCP request over HTTP follows the limits settings (trial 12 F1): a real
server process, the SDK's HTTP client and raw HTTP requests.

The SDK refused any body over 4 MiB with a bare ``413`` before octomem saw it, so an
``ingest`` text of 5 MB (within ``limits.file_bytes``, 10 MB) failed with "Server returned
an error response". Now the limit is ``6 x limits.file_bytes + 64 KiB`` and a larger body
is answered with a JSON-RPC error naming the setting."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from served import Served

from octomem.engine.settings_schema import LimitsSettings
from octomem.mcp_server.body_limit import body_limit

pytestmark = [pytest.mark.slow]

URL_LINE = r"MCP over streamable HTTP at (http://\S+/mcp)"
#: A small ``limits.file_bytes`` for the refusals, so their bodies stay small.
SMALL = 100_000
SMALL_LIMIT = 6 * SMALL + 64 * 1024


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_the_limit_follows_the_settings() -> None:
    assert body_limit(LimitsSettings()) == (60_065_536, "6 x limits.file_bytes")
    assert body_limit(LimitsSettings(file_bytes=SMALL)) == (SMALL_LIMIT, "6 x limits.file_bytes")
    assert body_limit(LimitsSettings(file_bytes=10, remember_chars=100_000)) == (
        1_265_536, "12 x limits.remember_chars")


@pytest.mark.anyio
async def test_a_text_over_four_mib_within_file_bytes_is_ingested(tmp_path: Path) -> None:
    """The trial's case with the default limits: 5 MB of text, as JSON 5 MB too."""
    text = "Kestrel filler sentence number. " * 163_840  # 5,242,880 bytes
    served = Served(tmp_path, "--http", "127.0.0.1:0")
    try:
        url = served.wait_for(URL_LINE).group(1)
        with anyio.fail_after(300):
            async with Client(url, read_timeout_seconds=300) as client:
                result = await client.call_tool(
                    "ingest", {"path_or_text": text, "scope": "global", "title": "big5"})
        assert not result.is_error, result.content
        assert len(result.structured_content["added"]) == 1
    finally:
        served.stop()


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_past_the_limits(tmp_path: Path, mode: str) -> None:
    """``limits.file_bytes`` 100,000: a text of 150,000 bytes reaches the memory, which
    refuses it naming the setting; a body over 665,536 bytes is refused by the HTTP layer
    in one line naming the setting too (the SDK's client shows it)."""
    served = Served(tmp_path, "--http", "127.0.0.1:0", OCTOMEM_LIMITS__FILE_BYTES=str(SMALL))
    try:
        url = served.wait_for(URL_LINE).group(1)
        with anyio.fail_after(120):
            async with Client(url, read_timeout_seconds=120, mode=mode) as client:
                over_file = await client.call_tool("ingest", {"path_or_text": "x" * 150_000})
                assert over_file.is_error
                assert "limits.file_bytes" in over_file.content[0].text  # type: ignore[union-attr]
                with pytest.raises(MCPError) as refused:
                    await client.call_tool("ingest", {"path_or_text": "y " * 400_000})
                status = await client.call_tool("status", {})  # the server is fine
        message = str(refused.value)
        assert "request too large" in message and "limits.file_bytes" in message, message
        assert f"more than the {SMALL_LIMIT:,} bytes" in message
        assert not status.is_error
    finally:
        served.stop()


@pytest.mark.anyio
async def test_raw_requests_over_the_limit_get_a_json_rpc_error(tmp_path: Path) -> None:
    """What curl sees: 413 and a JSON-RPC error, with a Content-Length (its size named) and
    streamed without one."""
    served = Served(tmp_path, "--http", "127.0.0.1:0", OCTOMEM_LIMITS__FILE_BYTES=str(SMALL))
    try:
        url = served.wait_for(URL_LINE).group(1)
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "ingest", "arguments": {"path_or_text": "z" * (SMALL_LIMIT + 10)}}})

        async def chunks() -> AsyncIterator[bytes]:
            for i in range(0, len(body), 65_536):
                yield body[i:i + 65_536].encode()

        headers = {"Accept": "application/json, text/event-stream",
                   "Content-Type": "application/json"}
        async with httpx2.AsyncClient(timeout=60) as http:
            sized = await http.post(url, content=body.encode(), headers=headers)
            streamed = await http.post(url, content=chunks(), headers=headers)
        for answer, size in ((sized, f"{len(body):,} bytes"), (streamed, "the request body")):
            assert answer.status_code == 413
            assert answer.headers["content-type"] == "application/json"
            error: dict[str, Any] = answer.json()["error"]
            assert error["code"] == -32600
            assert error["message"].startswith(f"request too large: {size} is more than the "
                                               f"{SMALL_LIMIT:,} bytes"), error["message"]
            assert "\n" not in error["message"]
    finally:
        served.stop()
