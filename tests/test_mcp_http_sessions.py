"""Trial 13 M15: abandoned MCP sessions of ``serve --http`` are closed after setting
``http_session_idle_s`` (the SDK session manager's ``session_idle_timeout``).

A client that initializes a session and goes away without ``DELETE`` (a crash, a closed
laptop) left the session, its transport and its streams in the server: for the SDK's
default 30 minutes, neither said nor configurable (the trial saw memory grow with each).
Against a real server process: an abandoned session's id is answered 404 once it has been
idle for the setting's seconds, while a session in use stays open past it.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from served import Served

pytestmark = [pytest.mark.slow]

URL_LINE = r"MCP over streamable HTTP at (http://\S+/mcp)"
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
VERSION = "2025-06-18"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _abandoned_session(http: httpx2.AsyncClient, url: str) -> str:
    """Initialize a session the way a client does, then leave it (no DELETE)."""
    reply = await http.post(url, headers=ACCEPT, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": VERSION, "capabilities": {},
                   "clientInfo": {"name": "gone", "version": "0"}}})
    assert reply.status_code == 200, reply.text
    session = reply.headers["mcp-session-id"]
    done = await http.post(url, headers=_in(session), json={
        "jsonrpc": "2.0", "method": "notifications/initialized"})
    assert done.status_code == 202, done.text
    return session


def _in(session: str) -> dict[str, str]:
    return {**ACCEPT, "mcp-session-id": session, "mcp-protocol-version": VERSION}


async def _status_call(http: httpx2.AsyncClient, url: str, session: str) -> Any:
    return await http.post(url, headers=_in(session), json={
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "status", "arguments": {}}})


@pytest.mark.anyio
async def test_an_abandoned_session_is_closed_after_the_idle_setting(tmp_path: Path) -> None:
    served = Served(tmp_path, "--http", "127.0.0.1:0", OCTOMEM_HTTP_SESSION_IDLE_S="2")
    try:
        url = served.wait_for(URL_LINE).group(1)
        with anyio.fail_after(120):
            async with httpx2.AsyncClient(timeout=60) as http:
                abandoned = [await _abandoned_session(http, url) for _ in range(3)]
                assert (await _status_call(http, url, abandoned[0])).status_code == 200
                async with Client(url, read_timeout_seconds=60) as client:
                    started = time.monotonic()
                    while time.monotonic() - started < 5:  # in use: stays open past 2 s
                        result = await client.call_tool("status", {})
                        assert not result.is_error, result.content
                        await anyio.sleep(0.5)
                for session in abandoned:  # idle for 5 s: closed, and its id unknown
                    reply = await _status_call(http, url, session)
                    assert reply.status_code == 404, (reply.status_code, reply.text)
                fresh = await _abandoned_session(http, url)  # a new session is served
                assert (await _status_call(http, url, fresh)).status_code == 200
        assert served.process.poll() is None
    finally:
        served.stop()


def test_the_idle_setting_is_checked_and_named(tmp_path: Path) -> None:
    served = Served(tmp_path, "--http", "127.0.0.1:0", OCTOMEM_HTTP_SESSION_IDLE_S="0")
    try:
        line = served.wait_for(r"http_session_idle_s").string
        assert "greater than or equal to 1" in line, line
        assert served.process.wait(timeout=120) != 0
        assert "Traceback" not in "".join(served.stderr), served.stderr
    finally:
        served.stop()
