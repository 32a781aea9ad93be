"""Metrics in the Prometheus text format on a loopback port (``serve --metrics-addr``).

:class:`MetricsServer` serves ``prometheus_client``'s own WSGI app (the exposition
format, content negotiation, gzip) from the stdlib's WSGI server on one daemon thread.
Loopback only: any other address is refused at start. ``GET /metrics`` only: any other
method is answered 405, any other path 404, and a ``Host`` header that is not a loopback
name 421 (a page that rebinds a DNS name to 127.0.0.1 cannot read it).
"""

from __future__ import annotations

import socket
import threading
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app

from .http import LOOPBACK_NAMES, Address, require_loopback

#: The path Prometheus scrapes.
METRICS_PATH = "/metrics"

class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        """Log nothing (a scrape every few seconds is not news)."""


class MetricsServer:
    """Prometheus's text format at ``http://HOST:PORT/metrics`` on a daemon thread.

    Loopback only; ``GET /metrics`` only (any other method 405, any other path 404, a
    ``Host`` that is not a loopback name 421). One request at a time, on one thread.

    :param registry: what to expose.
    :param address: a loopback address (port 0: any free port, see :attr:`port`).
    :raises AddressError: ``address`` is not loopback.
    :raises OSError: it cannot be bound.
    """

    def __init__(self, registry: CollectorRegistry, address: Address) -> None:
        require_loopback(address, "--metrics-addr")
        host = "127.0.0.1" if address.host == "localhost" else address.host
        server_class = _WSGIServer6 if ":" in host else WSGIServer
        self.address = address
        self._httpd = make_server(host, address.port, _only_get(make_wsgi_app(registry), host),
                                  server_class, handler_class=_Quiet)
        self.port: int = self._httpd.server_port
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True,
                                        name="octomem-metrics")
        self._thread.start()

    @property
    def url(self) -> str:
        """The scrape URL, e.g. ``http://127.0.0.1:9469/metrics``."""
        return self.address.url(METRICS_PATH, self.port)

    def close(self) -> None:
        """Stop serving and release the port."""
        self._httpd.shutdown()
        self._httpd.server_close()


class _WSGIServer6(WSGIServer):
    address_family = socket.AF_INET6


def _only_get(app: Any, host: str) -> Any:
    """Wrap the metrics app: ``GET /metrics`` with a loopback ``Host`` only."""
    names = {*LOOPBACK_NAMES, f"[{host}]" if ":" in host else host}

    def guarded(environ: dict[str, Any], start_response: Any) -> Any:
        if environ["REQUEST_METHOD"] != "GET":
            return _answer(start_response, "405 Method Not Allowed", [("Allow", "GET")])
        if environ.get("PATH_INFO") != METRICS_PATH:
            return _answer(start_response, "404 Not Found")
        if host_name(environ.get("HTTP_HOST", "")) not in names:
            return _answer(start_response, "421 Misdirected Request")
        return app(environ, start_response)

    return guarded


def host_name(header: str) -> str:
    """Return a ``Host`` header without its port (``[::1]:9469`` -> ``[::1]``)."""
    if header.startswith("["):
        return header[: header.find("]") + 1]
    return header.split(":", 1)[0]


def _answer(start_response: Any, status: str,
            headers: list[tuple[str, str]] | None = None) -> list[bytes]:
    body = f"{status}\n".encode()
    start_response(status, [("Content-Type", "text/plain; charset=utf-8"), *(headers or [])])
    return [body]
