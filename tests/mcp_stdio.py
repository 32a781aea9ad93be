"""Real MCP clients over stdio for the fault tests: the SDK's ``Client`` driven from
synchronous code (hypothesis, subprocess checks) through an anyio blocking portal, and a
raw JSON-RPC line client for what the SDK's client cannot send (invalid Unicode)."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from anyio.from_thread import start_blocking_portal
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult


def structured(result: CallToolResult) -> dict[str, Any]:
    """Return a tool call's structured answer, asserting it is not an error."""
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def server_env(tmp_path: Path, **env: str) -> dict[str, str]:
    """Environment of a server whose home, config, data and cache are inside ``tmp_path``."""
    home = tmp_path / "home"
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": os.environ.get("XDG_CACHE_HOME", str(home / ".cache")),
        "HF_HUB_OFFLINE": "1",
        "OCTOMEM_DATA_DIR": str(tmp_path / "data"),
        "OCTOMEM_PIPELINE__EMBEDDER": "hashing",
        **env,
    }


def server_args(project: Path, *extra: str) -> list[str]:
    return ["-m", "octomem.mcp_server", "--project-root", str(project), "--log-level",
            "WARNING", *extra]


class SyncClient:
    """One stdio MCP server and the SDK client talking to it, callable from sync code."""

    def __init__(self, portal: Any, client: Client) -> None:
        self.portal = portal
        self.client = client

    def call(self, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        return self.portal.call(self.client.call_tool, tool, arguments)

    def ok(self, tool: str, **arguments: Any) -> dict[str, Any]:
        result = self.call(tool, arguments)
        assert not result.is_error, result.content
        assert result.structured_content is not None
        return result.structured_content

    def error(self, tool: str, **arguments: Any) -> str:
        result = self.call(tool, arguments)
        assert result.is_error, str(result.structured_content)[:500]
        return result.content[0].text

    def read(self, uri: str) -> str:
        return self.portal.call(self.client.read_resource, uri).contents[0].text


@contextmanager
def stdio_client(tmp_path: Path, project: Path, *extra: str, **env: str) -> Iterator[SyncClient]:
    """Start ``python -m octomem.mcp_server`` for ``project`` and connect the SDK client."""
    params = StdioServerParameters(command=sys.executable, args=server_args(project, *extra),
                                   env=server_env(tmp_path, **env))
    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(Client(params, read_timeout_seconds=60)) as client:
            servers = _server_pids(project)
            yield SyncClient(portal, client)
    _wait_gone(servers)


def _server_pids(project: Path) -> set[int]:
    """PIDs of this process's children serving ``project`` (empty where there is no /proc)."""
    pids = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            command = (stat.parent / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue  # the process ended while we looked
        if parent == os.getpid() and str(project).encode() in command:
            pids.add(int(stat.parent.name))
    return pids


def _wait_gone(pids: set[int], timeout: float = 30.0) -> None:
    """Wait until every process in ``pids`` has exited (zombies count as exited).

    The SDK's client gives a server 2 s to exit before it signals it, then abandons one still
    alive; a test that changes the store's files next must not race a server still closing
    it (a checkpoint of its WAL would write the store back)."""
    deadline = time.monotonic() + timeout
    for pid in pids:
        while time.monotonic() < deadline:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except (OSError, IndexError):
                break
            if state in {"Z", "X"}:
                break
            time.sleep(0.02)


class RawServer:
    """A server spoken to in raw JSON-RPC lines (newline-delimited, as stdio frames them)."""

    def __init__(self, tmp_path: Path, project: Path, **env: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, *server_args(project)], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=server_env(tmp_path, **env))
        self.next_id = 0
        self._pending = b""  # read from stdout, not yet returned by receive
        reply = self.request("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"}})
        assert "result" in reply, reply
        self.send_line(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def send_line(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = 30.0) -> dict[str, Any] | None:
        """Return the next reply line, or ``None`` when none is complete within ``timeout``
        seconds (or the server closed stdout).

        Reads the pipe's descriptor into a buffer of its own: ``select`` on the buffered
        ``proc.stdout`` misses the lines a ``readline`` already pulled into Python's
        buffer, so when the server wrote two answers at once (pipelined calls, a loaded
        machine) the second was never seen ("only 17 of 18 replies", CI at load 4-5)."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.proc.stdout.fileno()], [], [], max(left, 0))
            if not ready:
                return None
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            if not chunk:
                return None  # the server closed stdout
            self._pending += chunk
        line, self._pending = self._pending.split(b"\n", 1)
        return json.loads(line)

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self.send_line(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method,
                                   "params": params}))
        reply = self.receive()
        assert reply is not None, f"no reply to {method}"
        return reply

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
