"""``octomem serve`` as a process: it ends within a second of its client closing stdin
(even while the model is still loading), and tells a person at a terminal what it is."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

OCTOMEM = str(Path(sys.executable).with_name("octomem"))
#: What the issue asks: the process is gone within 1 s of stdin closing.
EXIT_LIMIT_S = 1.0
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "test", "version": "0"}}}


def _env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    return {**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(home / "data"),
            "XDG_CONFIG_HOME": str(home / "config"), "XDG_CACHE_HOME": str(home / "cache"),
            "HF_HUB_OFFLINE": "1", "OCTOMEM_DATA_DIR": str(tmp_path / "data")}


def test_serve_exits_within_a_second_of_stdin_closing(tmp_path: Path) -> None:
    # The default embedder: its model is still loading on the server's background thread
    # when stdin closes right after initialize (before, shutdown waited up to 10 s for it).
    proc = subprocess.Popen([OCTOMEM, "serve"], cwd=tmp_path, env=_env(tmp_path),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        proc.stdin.flush()
        reply = json.loads(proc.stdout.readline())
        assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "octomem"
        closed = time.monotonic()
        proc.stdin.close()
        status = proc.wait(timeout=30)
        took = time.monotonic() - closed
    finally:
        proc.kill()
    assert status == 0
    assert took < EXIT_LIMIT_S, f"serve took {took:.2f} s to exit after stdin closed"
    assert proc.stderr is not None
    assert b"speaks MCP on stdio" not in proc.stderr.read()  # a client, not a person


def test_serve_at_a_terminal_says_it_speaks_mcp_and_ends_on_ctrl_d(tmp_path: Path) -> None:
    leader, follower = pty.openpty()
    proc = subprocess.Popen([OCTOMEM, "serve"], cwd=tmp_path, env=_env(tmp_path),
                            stdin=follower, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    os.close(follower)
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline().decode()
        assert "speaks MCP on stdio" in first
        assert f"claude mcp add octomem -- {OCTOMEM} serve" in first
        os.write(leader, b"\x04")  # Ctrl-D on an empty line: end of input
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
        os.close(leader)


def _jsonrpc(leader: int, message: dict[str, object]) -> None:
    os.write(leader, (json.dumps(message) + "\n").encode())


@pytest.mark.parametrize("level", [None, "INFO"])
def test_serve_at_a_terminal_shows_only_its_banner_unless_a_level_is_asked(
        tmp_path: Path, level: str | None) -> None:
    # stdin is a terminal (a person started it), stdout and stderr pipes so each can be
    # read whole; the terminal does not echo, so the requests typed are not read back.
    leader, follower = pty.openpty()
    attrs = termios.tcgetattr(follower)
    attrs[3] &= ~termios.ECHO
    termios.tcsetattr(follower, termios.TCSANOW, attrs)
    args = [OCTOMEM, "serve", *(["--log-level", level] if level else [])]
    proc = subprocess.Popen(args, cwd=tmp_path, stdin=follower, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE,
                            env={**_env(tmp_path), "OCTOMEM_PIPELINE__EMBEDDER": "hashing"})
    os.close(follower)
    try:
        assert proc.stdout is not None and proc.stderr is not None
        _jsonrpc(leader, INITIALIZE)
        assert json.loads(proc.stdout.readline())["id"] == 1
        _jsonrpc(leader, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _jsonrpc(leader, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                          "params": {"name": "status", "arguments": {}}})
        reply = json.loads(proc.stdout.readline())  # the memory is open: it was logged
        assert reply["id"] == 2 and not reply["result"].get("isError"), reply
        os.write(leader, b"\x04")
        assert proc.wait(timeout=60) == 0
        said = proc.stderr.read().decode().splitlines()
    finally:
        proc.kill()
        os.close(leader)
    assert "speaks MCP on stdio" in said[0]
    if level is None:
        assert said == said[:1], said  # the banner, nothing else
    else:
        assert any("INFO octomem.mcp_server.loader: memory opened" in s for s in said), said
        assert any("INFO octomem.calls" in s and "status" in s for s in said), said


def test_libraries_log_info_only_at_debug() -> None:
    import logging

    from octomem.mcp_server.logs import LIBRARY_LOGGERS, configure_logging, default_level

    assert default_level(http=False, stdin_is_terminal=True) == "WARNING"
    assert default_level(http=False, stdin_is_terminal=False) == "INFO"  # a client's pipe
    assert default_level(http=True, stdin_is_terminal=True) == "INFO"
    root = logging.getLogger()
    saved = root.level, list(root.handlers)
    try:
        configure_logging("text", "INFO")
        assert logging.getLogger("octomem.mcp_server.loader").isEnabledFor(logging.INFO)
        assert not logging.getLogger("uvicorn.error").isEnabledFor(logging.INFO)
        assert not logging.getLogger("mcp.server.lowlevel.server").isEnabledFor(logging.INFO)
        assert logging.getLogger("uvicorn.error").isEnabledFor(logging.WARNING)
        configure_logging("text", "DEBUG")
        assert logging.getLogger("uvicorn.error").isEnabledFor(logging.DEBUG)
    finally:
        root.setLevel(saved[0])
        root.handlers[:] = saved[1]
        for name in LIBRARY_LOGGERS:
            logging.getLogger(name).setLevel(logging.NOTSET)
