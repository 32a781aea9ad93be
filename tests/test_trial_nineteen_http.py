"""Trial 19 K4: a streamable-HTTP client that goes away mid-call left tracebacks in the
server's log.

A client cancelled mid-call sends ``notifications/cancelled`` and ends its session
(``DELETE``) at once, on two connections. When the ``DELETE`` closed the session's streams
after the SDK had answered the notification ``202`` but before it handed it on, the
server's stderr got ``ERROR mcp.server.streamable_http: Error handling POST request``
(``anyio.ClosedResourceError``) and ``ERROR uvicorn.error: Exception in ASGI application
... 'http.response.start' sent, after response already completed`` (the SDK's ``500``
after its complete ``202``). Now it is one INFO line per such request.

The race is provoked against a real server process: each pair's two requests are sent
whole but for their last byte (the SDK reads a body whole before it looks at the
session), then the last bytes go out back to back, notification first, so the server
takes in both in one turn of its event loop: the notification is answered and waits to
be handed on while the ``DELETE`` ends the session.
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import httpx2
import pytest
from served import Served

pytestmark = [pytest.mark.slow]

URL_LINE = r"MCP over streamable HTTP at http://127\.0\.0\.1:(\d+)/mcp"
VERSION = "2025-06-18"
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
#: Sessions whose notification and DELETE race (each pair loses the race about half the
#: time on the 2-core machine; all 20 lost it in a loaded run).
PAIRS = 20


def _session(http: httpx2.Client, url: str) -> str:
    reply = http.post(url, headers=ACCEPT, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": VERSION, "capabilities": {},
                   "clientInfo": {"name": "gone", "version": "0"}}})
    assert reply.status_code == 200, reply.text
    session = reply.headers["mcp-session-id"]
    done = http.post(url, headers={**ACCEPT, "mcp-session-id": session,
                                   "mcp-protocol-version": VERSION},
                     json={"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert done.status_code == 202, done.text
    return session


def _raw(method: str, port: int, session: str, body: bytes) -> bytes:
    head = (f"{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            "Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
            f"Mcp-Session-Id: {session}\r\nMcp-Protocol-Version: {VERSION}\r\n"
            f"Content-Length: {len(body)}\r\n\r\n")
    return head.encode() + body


def _held(port: int, request: bytes) -> tuple[socket.socket, bytes]:
    """Send ``request`` but its last byte; return the connection and that byte."""
    connection = socket.create_connection(("127.0.0.1", port), timeout=60)
    connection.sendall(request[:-1])
    return connection, request[-1:]


def _status_line(connection: socket.socket) -> str:
    return connection.recv(4096).split(b"\r\n", 1)[0].decode()


def test_a_client_ending_its_session_mid_notification_is_one_info_line(
        tmp_path: Path) -> None:
    served = Served(tmp_path, "--http", "127.0.0.1:0")
    try:
        port = int(served.wait_for(URL_LINE).group(1))
        url = f"http://127.0.0.1:{port}/mcp"
        cancelled = json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                "params": {"requestId": 7}}).encode()
        with httpx2.Client(timeout=60) as http:
            pairs = []
            for _ in range(PAIRS):
                session = _session(http, url)
                pairs.append([_held(port, _raw("POST", port, session, cancelled)),
                              _held(port, _raw("DELETE", port, session, b"{}"))])
            time.sleep(0.5)  # every request parked reading its body
            for pair in pairs:
                for connection, last in pair:
                    connection.sendall(last)
            answers = [tuple(_status_line(c) for c, _ in pair) for pair in pairs]
            for pair in pairs:
                for connection, _ in pair:
                    connection.close()
            assert answers == [("HTTP/1.1 202 Accepted", "HTTP/1.1 200 OK")] * PAIRS
            # the server goes on serving
            fresh = _session(http, url)
            reply = http.post(url, headers={**ACCEPT, "mcp-session-id": fresh,
                                            "mcp-protocol-version": VERSION},
                              json={"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                    "params": {"name": "status", "arguments": {}}})
            assert reply.status_code == 200 and '"isError":false' in reply.text, reply.text
        gone = served.wait_for(r"INFO octomem\.mcp_server\.http_gone: a client went away: "
                               r"its session ended while a message it had sent "
                               r"\(POST /mcp, already answered\) was being delivered; "
                               r"nothing lost$")
        assert gone
    finally:
        served.stop()
    log = "".join(served.stderr)
    assert "Traceback" not in log and " ERROR " not in log, log
    assert 1 <= log.count("a client went away") <= PAIRS
