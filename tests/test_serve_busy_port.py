"""``octomem serve`` on a port already in use: one line naming what could not be bound,
exit status 1, before the model is loaded (fresh-user trial 3, finding 9)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from octomem.mcp_server.http import Address, AddressError, serve_http
from octomem.mcp_server.server import create_server

OCTOMEM = str(Path(sys.executable).with_name("octomem"))


@pytest.fixture
def busy() -> Iterator[int]:
    """A loopback port another program listens on."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield holder.getsockname()[1]


def _serve(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"),
           "XDG_DATA_HOME": str(home / ".local" / "share"),
           "XDG_CONFIG_HOME": str(home / ".config")}
    return subprocess.run([OCTOMEM, "--project-root", str(tmp_path), "serve", *args],
                          cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_http_on_a_busy_port_is_one_line_before_the_model_loads(tmp_path: Path,
                                                                busy: int) -> None:
    done = _serve(tmp_path, "--http", f"127.0.0.1:{busy}")
    assert done.returncode == 1
    assert done.stderr == f"error: cannot listen on 127.0.0.1:{busy}: address already in use\n"
    assert not (tmp_path / "home" / ".cache" / "octomem" / "models").exists()  # no model
    assert not (tmp_path / ".octomem").exists()  # nor a store


@pytest.mark.slow
def test_metrics_on_a_busy_port_names_the_address(tmp_path: Path, busy: int) -> None:
    done = _serve(tmp_path, "--metrics-addr", f"127.0.0.1:{busy}")
    assert done.returncode == 1
    assert done.stderr == (f"error: --metrics-addr: cannot listen on 127.0.0.1:{busy}: "
                           "address already in use\n")


def test_a_port_taken_after_the_check_is_one_error_not_a_traceback(
        data_dir: Path, busy: int) -> None:
    server = create_server(overrides={"data_dir": str(data_dir),
                                      "pipeline": {"embedder": "hashing"}})
    with pytest.raises(AddressError) as raised:
        anyio.run(serve_http, server, Address("127.0.0.1", busy), None)
    assert str(raised.value) == (f"cannot listen on 127.0.0.1:{busy} (the port was taken "
                                 "after it was checked; see the log line above)")


@pytest.mark.slow
def test_the_view_on_a_busy_port_words_it_as_serve_does(tmp_path: Path, busy: int) -> None:
    home = tmp_path / "home"
    done = subprocess.run(
        [OCTOMEM, "--set", "pipeline.embedder=hashing", "ui", "--project-root", str(tmp_path),
         "--port", str(busy)], cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True,
        text=True, timeout=120, env={**os.environ, "HOME": str(home),
                                     "XDG_CACHE_HOME": str(home / ".cache")})
    assert done.returncode == 1
    assert done.stderr == (f"error: the browser view cannot listen on 127.0.0.1:{busy}: "
                           "address already in use\n")
