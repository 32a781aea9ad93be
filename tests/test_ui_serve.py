"""``octomem serve --ui-port N``: the view beside the MCP stdio server, over the same memory,
stopped with it; stdout still carries only JSON-RPC."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.slow

OCTOMEM = str(Path(sys.executable).with_name("octomem"))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def send(proc: subprocess.Popen[str], message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()


def answer(proc: subprocess.Popen[str], request_id: int) -> dict[str, Any]:
    """Read stdout lines up to the answer to ``request_id``; each must be JSON-RPC."""
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        assert line, "the server closed stdout"
        message = json.loads(line)  # anything but JSON on stdout breaks the protocol
        assert message["jsonrpc"] == "2.0"
        if message.get("id") == request_id:
            return message  # type: ignore[no-any-return]


def test_serve_with_the_view(tmp_path: Path) -> None:
    port = free_port()
    project = tmp_path / "project"
    project.mkdir()
    env = {**os.environ, "HOME": str(tmp_path / "home"), "OCTOMEM_DATA_DIR": str(tmp_path / "d"),
           "OCTOMEM_PIPELINE__EMBEDDER": "hashing", "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen([OCTOMEM, "serve", "--ui-port", str(port)], cwd=project, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}})
        assert answer(proc, 1)["result"]["serverInfo"]["name"] == "octomem"
        send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        send(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "remember", "arguments": {"text": "The view and MCP share one memory"}}})
        stored = answer(proc, 2)["result"]["structuredContent"]
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            page = http.get("/", params={"q": "view shares memory"})
            assert page.status_code == 200 and f'data-id="{stored["id"]}"' in page.text
            assert http.get("/status").status_code == 200
        send(proc, {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "recall", "arguments": {"query": "view shares memory"}}})
        hits = answer(proc, 3)["result"]["structuredContent"]["hits"]
        assert hits[0]["id"] == stored["id"]
        status = httpx.get(f"http://127.0.0.1:{port}/status", timeout=30).text
        assert "From the MCP tool calls this server answered." in status
        assert "<polyline" in status and "p50 " in status  # the recall, charted
        assert proc.stdin is not None
        proc.stdin.close()  # the client goes away: the server stops, and the view with it
        assert proc.wait(timeout=30) == 0
        rest = proc.stdout.read() if proc.stdout else ""
        assert all(json.loads(line)["jsonrpc"] == "2.0" for line in rest.splitlines())
        with pytest.raises(httpx.ConnectError):
            httpx.get(f"http://127.0.0.1:{port}/", timeout=5)
        assert f"browser view on http://127.0.0.1:{port}/" in (proc.stderr.read()
                                                               if proc.stderr else "")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_refuses_a_remote_view_at_once(tmp_path: Path) -> None:
    done = subprocess.run([OCTOMEM, "serve", "--ui-port", "0", "--ui-host", "0.0.0.0"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "HOME": str(tmp_path)}, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and done.stdout == ""  # a usage error
    assert "--allow-remote" in done.stderr and "Traceback" not in done.stderr


def test_the_view_token_comes_from_setting_ui_token(tmp_path: Path) -> None:
    """``OCTOMEM_UI_TOKEN`` (setting ``ui_token``) is the remote view's token; any other
    command runs with it set, and a short one is refused in one line."""
    token = "chosen-by-the-user-1234"
    env = {**os.environ, "HOME": str(tmp_path / "home"), "OCTOMEM_DATA_DIR": str(tmp_path / "d"),
           "OCTOMEM_PIPELINE__EMBEDDER": "hashing", "OCTOMEM_UI_TOKEN": token}
    status = subprocess.run([OCTOMEM, "config"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120, env=env, stdin=subprocess.DEVNULL)
    assert status.returncode == 0, status.stderr
    assert "ui_token" in status.stdout and token not in status.stdout  # shown masked
    port = free_port()
    proc = subprocess.Popen([OCTOMEM, "ui", "--host", "127.0.0.1", "--allow-remote",
                             "--port", str(port)], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        assert f"?token={token}" in proc.stdout.readline()
        url = f"http://127.0.0.1:{port}/status"
        assert httpx.get(url, timeout=30).status_code == 401
        assert httpx.get(url, timeout=30, headers={
            "Authorization": f"Bearer {token}"}).status_code == 200
    finally:
        proc.kill()
        proc.wait()
    short = subprocess.run([OCTOMEM, "ui", "--allow-remote", "--port", "0"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                           env={**env, "OCTOMEM_UI_TOKEN": "short"})
    assert short.returncode != 0 and "Traceback" not in short.stderr
    assert "ui_token (OCTOMEM_UI_TOKEN): the token must be at least 16" in short.stderr
