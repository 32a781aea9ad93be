"""``octomem serve``: logs, the server, its metrics endpoint, then stdio or HTTP until done.

Both ``octomem serve`` and ``python -m octomem.mcp_server`` call :func:`serve`:

1. configure the logs (stderr only; ``text`` or ``json``, :mod:`.logs`);
2. check the addresses (``--http``, ``--metrics-addr``: loopback only) and that each can
   be bound before anything else starts (the model is not loaded for nothing), so a
   refused address or a port in use is one line (``cannot listen on HOST:PORT: address
   already in use``) and exit status 1;
3. build the server with an :class:`~.observe.Observer` (tool calls counted, one log
   line each, the opt-in call log) and start the metrics endpoint if asked
   (:mod:`.metrics_http`);
4. serve MCP over stdio (the default) or streamable HTTP (:mod:`.http`), and stop the
   metrics endpoint when that ends; stdio ends the process as soon as the client closes
   stdin (:mod:`.process`), and at a terminal first says what it is on stderr.
   The browser view (``--ui-port``, :mod:`.ui`) starts and stops with the server itself.

Lines meant for the person who started the server (the HTTP URL, a generated token, the
metrics URL) go to stderr, prefixed ``octomem:``; stdout carries only the protocol.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import anyio

from octomem.engine.settings import load_settings

from .body_limit import body_limit
from .http import (
    Address,
    AddressValueError,
    check_free,
    listen_error,
    parse_address,
    require_loopback,
    resolve_token,
    serve_http,
)
from .logs import configure_logging, default_level
from .metrics_http import MetricsServer
from .observe import Observer
from .process import exit_now, say_what_this_is
from .server import create_server, new_observer
from .ui.options import UiOptions

#: Default address of ``--http`` when given without one (documented in docs/mcp.md).
DEFAULT_HTTP = "127.0.0.1:8765"
#: Default address of ``--metrics-addr`` (the port ``octomem metrics`` reads).
DEFAULT_METRICS = "127.0.0.1:9469"


@dataclass(frozen=True, slots=True)
class ServeOptions:
    """How ``serve`` runs.

    :param http: ``HOST:PORT`` to serve MCP over streamable HTTP; ``None``: stdio.
    :param metrics_addr: loopback ``HOST:PORT`` for ``GET /metrics``; ``None``: not served.
    :param log_format: ``text`` or ``json`` (stderr).
    :param log_level: ``DEBUG``, ``INFO``, ``WARNING`` or ``ERROR``; ``None``:
        :func:`~.logs.default_level` (``WARNING`` at a terminal over stdio, else ``INFO``).
    :param ui: serve the browser view beside MCP (``--ui-port``); ``None``: not served.
    """

    http: str | None = None
    metrics_addr: str | None = None
    log_format: str = "text"
    log_level: str | None = None
    ui: UiOptions | None = None


def check_addresses(options: ServeOptions) -> tuple[Address | None, Address | None]:
    """Parse ``--http`` and ``--metrics-addr``; the metrics address must be loopback, and
    no two of the servers (``--http``, ``--metrics-addr``, ``--ui-port``) may share a port.

    :raises AddressError: either is malformed, the metrics address is not loopback, or
        two servers were given the same port (:class:`AddressValueError`: a usage error).
    """
    http = parse_address(options.http, "--http") if options.http else None
    metrics = parse_address(options.metrics_addr, "--metrics-addr") \
        if options.metrics_addr else None
    ports = [(name, port) for name, port in (
        ("--http", http.port if http else 0), ("--metrics-addr", metrics.port if metrics else 0),
        ("--ui-port", options.ui.port if options.ui else 0)) if port]
    for i, (name, port) in enumerate(ports):
        for other, same in ports[i + 1:]:
            if same == port:
                raise AddressValueError(f"{other} {port} is also {name}'s port: each server "
                                        "(MCP over HTTP, metrics, browser view) needs its own")
    return http, require_loopback(metrics, "--metrics-addr") if metrics else None


def serve(config_file: Path | None, overrides: dict[str, Any] | None,
          project_root: Path | None, global_root: Path | None,
          options: ServeOptions = ServeOptions()) -> None:
    """Serve one project's memory until stdin closes (stdio) or the process is stopped
    (HTTP: Ctrl-C or SIGTERM).

    :raises OctomemError: bad settings, a refused or malformed address, a bad log option.
    :raises OSError: an address cannot be bound.
    """
    configure_logging(options.log_format, options.log_level
                      or default_level(options.http is not None, sys.stdin.isatty()))
    http, metrics_at = check_addresses(options)
    if http is not None:
        check_free(http)
    if metrics_at is not None:
        check_free(metrics_at, "--metrics-addr")
    observer = new_observer()
    # stdio ends the process at once when stdin closes (exit_now): nothing to wait for.
    server = create_server(config_file, overrides, project_root, global_root, observer,
                           options.ui, **({"shutdown_wait_s": 0} if http is None else {}))
    metrics = _start_metrics(observer, metrics_at)
    try:
        if http is None:
            _serve_stdio(server)
            return
        settings = load_settings(config_file, overrides, project_root=project_root).settings
        configured = settings.http_token
        token, generated = resolve_token(http, configured.get_secret_value()
                                         if configured is not None else None)
        if generated:
            _say(f"{http.host} is not loopback: clients must send the header "
                 f"'Authorization: Bearer {token}' (a new token each start; set "
                 "OCTOMEM_HTTP_TOKEN to keep one)")
        anyio.run(serve_http, server, http, token, body_limit(settings.limits),
                  settings.http_session_idle_s)
    finally:
        if metrics is not None:
            metrics.close()


def _serve_stdio(server: Any) -> NoReturn:
    """Serve over stdio until the client closes stdin (or Ctrl-C), then end the process
    within a second (:mod:`.process`: no interpreter teardown, no wait for a model load);
    at a terminal, first say on stderr what this is and how a client starts it."""
    say_what_this_is(sys.argv)
    try:
        server.run("stdio")
    except KeyboardInterrupt:
        exit_now(130)
    exit_now(0)


def _start_metrics(observer: Observer, address: Address | None) -> MetricsServer | None:
    if address is None:
        return None
    try:
        metrics = MetricsServer(observer.registry, address)
    except OSError as exc:  # taken since check_free
        raise listen_error(address, exc, "--metrics-addr") from None
    _say(f"metrics at {metrics.url}")
    return metrics


def _say(line: str) -> None:
    print(f"octomem: {line}", file=sys.stderr, flush=True)
