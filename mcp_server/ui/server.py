"""Run the browser view: beside the MCP server (``serve --ui-port``) or alone (``octomem ui``).

The view runs on its own thread with its own event loop (uvicorn), so a page being
drawn never runs on the MCP server's loop; it reads the same :class:`MemoryLoader` (the
same open memory, the same write lock) and stops when the MCP server stops. Its socket
is bound before the thread starts, so a port in use is a one-line error at start.
uvicorn's own logging goes to the root logger (stderr); nothing is printed on stdout,
which carries the MCP protocol.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from pathlib import Path
from typing import Any

import uvicorn

from octomem.engine.errors import OctomemError

from ..loader import MemoryLoader
from .app import create_ui_app
from .chart import CallSource
from .guard import Guard, check_bind
from .options import UiOptions, with_token

log = logging.getLogger(__name__)

#: Longest :meth:`UiServer.start` waits for the server to accept connections (seconds).
START_TIMEOUT_S = 10.0
#: Longest :meth:`UiServer.stop` waits for open requests to finish (seconds).
STOP_TIMEOUT_S = 5.0


class UiStartError(OctomemError):
    """The view could not listen where it was asked to (address in use, not allowed)."""


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise UiStartError(f"the browser view cannot listen on {host}:{port}: "
                           f"{(exc.strerror or str(exc)).lower()}") from exc
    sock.listen(128)
    sock.setblocking(False)
    return sock


class UiServer:
    """The view's HTTP server on a daemon thread.

    :param app: the ASGI app (:func:`~.app.create_ui_app`).
    :param sock: a bound, listening socket.
    :param token: the access token a remote view requires, to print in its URL.
    """

    def __init__(self, app: Any, sock: socket.socket, token: str | None = None) -> None:
        self.sock = sock
        self.token = token
        host, port = sock.getsockname()[:2]
        self.host, self.port = str(host), int(port)
        config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="off",
                                timeout_graceful_shutdown=STOP_TIMEOUT_S)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]},
                                        name="octomem-ui", daemon=True)

    @property
    def url(self) -> str:
        """The view's address (with ``?token=`` when it requires one)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/" + (f"?token={self.token}" if self.token else "")

    def start(self) -> UiServer:
        """Start serving; return once connections are accepted.

        :raises UiStartError: the server did not start within :data:`START_TIMEOUT_S`.
        """
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise UiStartError(f"the view did not start on {self.url}; see the log")
            time.sleep(0.01)
        log.info("browser view on %s", self.url)
        return self

    def stop(self) -> None:
        """Stop serving and wait for the thread (at most :data:`STOP_TIMEOUT_S` + 1 s)."""
        self._server.should_exit = True
        if self._thread.is_alive():
            self._thread.join(STOP_TIMEOUT_S + 1.0)
        self.sock.close()


def prepare_ui(loader: MemoryLoader, options: UiOptions, calls: CallSource | None = None,
               chart_what: str | None = None) -> UiServer:
    """Check ``options`` and bind the view's socket over ``loader``'s memory (not started:
    :meth:`UiServer.start` serves it).

    :param calls: the MCP server's recent calls, for the status chart.
    :raises UiAccessError: a non-loopback host without ``allow_remote``.
    :raises UiStartError: the address cannot be bound.
    """
    token = check_bind(options.host, options.allow_remote, options.token)
    sock = _bind(options.host, options.port)
    guard = Guard(options.host, int(sock.getsockname()[1]), token)
    app = create_ui_app(loader, guard, options.allow_writes, calls, chart_what)
    return UiServer(app, sock, token)


def serve_ui(options: UiOptions, config_file: Path | None = None,
             overrides: dict[str, Any] | None = None, project_root: Path | None = None,
             global_root: Path | None = None) -> None:
    """``octomem ui``: open the memory, serve the view until interrupted, close both.

    :raises OctomemError: bad settings (checked before anything listens), the address.
    """
    from functools import partial

    from octomem.engine.memory.facade import open_memory
    from octomem.engine.project import find_project_root
    from octomem.engine.settings import load_settings

    project = (Path(project_root).expanduser().resolve() if project_root is not None
               else find_project_root())
    settings = load_settings(config_file, overrides, project_root=project).settings
    loader = MemoryLoader(partial(open_memory, config_file, overrides, project, global_root))
    server = prepare_ui(loader, with_token(options, settings)).start()
    loader.start()
    print(f"octomem: browser view of {project} on {server.url} (Ctrl-C stops it)", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        loader.close(10.0)
