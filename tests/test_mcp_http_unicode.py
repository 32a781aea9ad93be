"""A lone surrogate over HTTP is answered as over stdio (trial 12 F9): ``-32602`` with the
request's id, naming the argument, not the SDK's ``-32700`` parse error with ``id: null``.
A real server process, raw HTTP requests as curl sends them."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2
import pytest
from served import Served

pytestmark = [pytest.mark.slow]

URL_LINE = r"MCP over streamable HTTP at (http://\S+/mcp)"
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _json_of(answer: Any) -> dict[str, Any]:
    """The JSON-RPC message of an answer sent as JSON or as one SSE event."""
    if answer.headers["content-type"].startswith("text/event-stream"):
        data = [line[5:] for line in answer.text.splitlines() if line.startswith("data:")]
        return json.loads(data[-1])
    return answer.json()


@pytest.mark.anyio
async def test_a_lone_surrogate_over_http_gets_its_id_and_the_argument(tmp_path: Any) -> None:
    served = Served(tmp_path, "--http", "127.0.0.1:0")
    try:
        url = served.wait_for(URL_LINE).group(1)
        with anyio.fail_after(120):
            async with httpx2.AsyncClient(timeout=60) as http:
                init = await http.post(url, headers=HEADERS, json={
                    "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                        "protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "curl", "version": "0"}}})
                assert init.status_code == 200, init.text
                session = {**HEADERS, "mcp-session-id": init.headers["mcp-session-id"],
                           "mcp-protocol-version": "2025-06-18"}
                await http.post(url, headers=session, content=json.dumps(
                    {"jsonrpc": "2.0", "method": "notifications/initialized"}))
                raw = ('{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":'
                       '"recall","arguments":{"query":"abc \\ud800 def"}}}')
                bad = await http.post(url, headers=session, content=raw.encode())
                garbage = await http.post(url, headers=session, content=b"{bad")
                # nested deeper than Python's json reads: the SDK's parse error, not a 500
                nested = await http.post(url, headers=session, content=b"[" * 200_000)
                good = await http.post(url, headers=session, content=json.dumps(
                    {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                     "params": {"name": "status", "arguments": {}}}))
        assert bad.status_code == 400 and bad.headers["content-type"] == "application/json"
        assert bad.json() == {"jsonrpc": "2.0", "id": 2, "error": {
            "code": -32602, "message": "arguments.query: invalid Unicode (a lone surrogate "
            "escape such as \\ud800); send UTF-8 text"}}, bad.text
        assert int(bad.headers["content-length"]) == len(bad.content)
        # a body that is not JSON at all is still the SDK's parse error, id null
        assert garbage.status_code == 400 and garbage.json()["error"]["code"] == -32700
        assert garbage.json()["id"] is None
        assert nested.status_code == 400 and nested.json()["error"]["code"] == -32700
        assert "RecursionError" not in "".join(served.stderr)
        assert "result" in _json_of(good), good.text  # the session goes on
    finally:
        served.stop()
