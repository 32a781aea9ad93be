"""Serve the MCP server over streamable HTTP (``octomem serve --http HOST:PORT``).

MCP over HTTP is the ``mcp`` SDK's own streamable-HTTP transport
(:meth:`MCPServer.streamable_http_app <mcp.server.mcpserver.MCPServer.streamable_http_app>`:
a Starlette app whose session manager serves many clients at once, each in its own
session) run by uvicorn, at ``http://HOST:PORT/mcp``. Two guards sit in front of it:

- **a bearer token** (:class:`BearerTokenGuard`): every request must carry
  ``Authorization: Bearer <token>``, or it is answered 401 before it reaches the SDK.
  It is required for any bind that is not loopback (the token comes from setting
  ``http_token`` / ``OCTOMEM_HTTP_TOKEN``, or one is generated and printed to stderr);
  a loopback bind uses it only when one is set.
- **Host/Origin checks** (the SDK's DNS-rebinding protection,
  :class:`~mcp.server.transport_security.TransportSecuritySettings`): on a loopback bind
  a request must name a loopback host (``127.0.0.1``, ``localhost``, ``[::1]``, or the
  bound address) in ``Host``, and a browser's ``Origin`` must be one too; so a web page
  cannot reach a token-less loopback server through a rebound DNS name.

A request body may be as large as any text the limits settings allow, JSON-escaped
(:mod:`.body_limit`); a larger one is refused with a JSON-RPC error naming the setting.
The metrics endpoint is :mod:`.metrics_http`.

Stopping (SIGTERM, Ctrl-C) while tool calls run (:mod:`.stopping`): the server says on
stderr what it waits for, lets an ingest stop at its next embedding batch, answers the
calls on their open streams, answers listings but no new calls meanwhile
(:mod:`.draining`), then stops listening and ends the other event streams the moment
those answers are written (:mod:`.open_answers`; sse-starlette would end every
stream at the signal: the client was told its call failed while the server went on with
it for minutes); a second signal ends the process at once.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
import socket
import sys
from dataclasses import dataclass
from typing import Any

import anyio
import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from sse_starlette.sse import AppStatus

from octomem.engine.errors import OctomemError, UsageValueError

from .body_limit import DEFAULT_BODY_LIMIT, BodyLimitAnswer
from .draining import StoppingGate
from .http_gone import ClientGoneAnswer, quiet_gone_clients
from .http_unicode import SurrogateAnswer
from .open_answers import OpenAnswers
from .process import exit_now
from .stopping import RunningCalls

#: The path MCP is served at (the SDK's default): ``http://HOST:PORT/mcp``.
MCP_PATH = "/mcp"
#: Host names a loopback server answers to (besides the address it is bound to).
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


class AddressError(OctomemError, ValueError):
    """A ``HOST:PORT`` that cannot be served (bad syntax, or not loopback where it must be)."""


class AddressValueError(AddressError, UsageValueError):
    """A ``HOST:PORT`` option that is malformed or not allowed (the caller's mistake: a
    usage error), as opposed to one that is right but cannot be bound (in use)."""


@dataclass(frozen=True, slots=True)
class Address:
    """A ``HOST:PORT`` to bind.

    :param host: an IP address or ``localhost`` (IPv6 without brackets).
    :param port: 0..65535 (0: any free port, reported once bound).
    """

    host: str
    port: int

    @property
    def loopback(self) -> bool:
        """True for ``localhost`` and loopback IP addresses (127.0.0.0/8, ::1)."""
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False

    def url(self, path: str = "", port: int | None = None) -> str:
        """Return ``http://host:port<path>`` (IPv6 in brackets)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port if port is None else port}{path}"


def require_loopback(address: Address, option: str) -> Address:
    """Return ``address`` if it is loopback.

    :raises AddressValueError: it is not (naming ``option``).
    """
    if not address.loopback:
        raise AddressValueError(
            f"{option}: {address.host} is not a loopback address; it is served on loopback "
            "only (e.g. 127.0.0.1); reach it from elsewhere through a tunnel or a proxy you "
            "secure")
    return address


def listen_error(address: Address, exc: OSError, option: str | None = None) -> AddressError:
    """Return the one-line error for ``address`` that cannot be bound: ``cannot listen on
    HOST:PORT: address already in use`` (``option`` first when given)."""
    reason = (exc.strerror or str(exc)).lower()
    host = f"[{address.host}]" if ":" in address.host else address.host
    return AddressError(f"{option + ': ' if option else ''}cannot listen on "
                        f"{host}:{address.port}: {reason}")


def check_free(address: Address, option: str | None = None) -> None:
    """Bind ``address`` once and let it go, so a port in use is one error line before the
    server starts (and loads its model); the servers bind it again with
    ``SO_REUSEADDR``, as this check does, so a port left in ``TIME_WAIT`` passes.
    Port 0 (any free port) always passes.

    :raises AddressError: it cannot be bound (:func:`listen_error`).
    """
    if address.port == 0:
        return
    host = "127.0.0.1" if address.host == "localhost" else address.host
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, address.port))
        except OSError as exc:
            raise listen_error(address, exc, option) from None


def parse_address(text: str, option: str) -> Address:
    """Parse ``HOST:PORT`` (``[::1]:PORT`` for IPv6).

    :param option: the option it came from, named in errors (e.g. ``--http``).
    :raises AddressValueError: no port, a port outside 0..65535, or a host that is neither an
        IP address nor ``localhost``.
    """
    host, sep, port = text.strip().rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise AddressValueError(f"{option}: expected HOST:PORT (e.g. 127.0.0.1:8765), got {text!r}")
    if host != "localhost":
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise AddressValueError(
                f"{option}: {host!r} is not an IP address or localhost") from None
    return Address(host, int(port))


class BearerTokenGuard:
    """ASGI middleware: refuse every HTTP request without ``Authorization: Bearer <token>``.

    The token is compared in constant time (:func:`hmac.compare_digest`); a refused
    request gets ``401`` with ``WWW-Authenticate: Bearer`` (RFC 6750 section 3) and never
    reaches the wrapped app. Lifespan events pass through.

    :param app: the ASGI app to guard.
    :param token: the token every request must present.
    """

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._expected = token.encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Pass an authorised request (or a non-HTTP event) to the app; answer 401 otherwise.
        The scheme ``Bearer`` is matched in any case (RFC 7235 section 2.1)."""
        if scope["type"] in ("http", "websocket"):
            given = next((v for k, v in scope.get("headers", ()) if k == b"authorization"), b"")
            scheme, _, credentials = given.partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(credentials.strip(),
                                                                         self._expected):
                await _refuse(send, sent=bool(given))
                return
        await self.app(scope, receive, send)


async def _refuse(send: Any, sent: bool) -> None:
    """Answer 401: a bearer token is required (none sent) or the one sent is wrong."""
    why = b"the bearer token is wrong" if sent else b"a bearer token is required"
    body = b'{"error":"invalid_token","error_description":"' + why + b'"}'
    await send({"type": "http.response.start", "status": 401, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", b'Bearer realm="octomem", error="invalid_token"')]})
    await send({"type": "http.response.body", "body": body})


def host_checks(address: Address) -> TransportSecuritySettings | None:
    """Return the SDK's DNS-rebinding protection for a loopback bind (``Host`` must be a
    loopback name or the bound address, any port; a browser's ``Origin`` likewise), or
    ``None`` for any other bind (the bearer token protects it)."""
    if not address.loopback:
        return None
    names = {*LOOPBACK_NAMES, f"[{address.host}]" if ":" in address.host else address.host}
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{n}:*" for n in sorted(names)],
        allowed_origins=[f"http://{n}:*" for n in sorted(names)],
    )


#: Shortest configured bearer token on a bind beyond loopback: the browser view's
#: ``ui_token`` minimum (:mod:`.ui.guard`), so both guards of a LAN server ask alike.
MIN_TOKEN_CHARS = 16


def resolve_token(address: Address, configured: str | None) -> tuple[str | None, bool]:
    """Return the bearer token an HTTP server at ``address`` requires, and whether it was
    generated here (then the caller prints it): the configured one if set; else a new
    random one (32 bytes, URL-safe base64) for a non-loopback bind; else ``None``.

    :raises OctomemError: the configured token is not printable ASCII (an HTTP header
        carries ASCII: the SDK's client cannot send it), or is shorter than
        :data:`MIN_TOKEN_CHARS` on a bind beyond loopback.
    """
    if configured:
        if not (configured.isascii() and configured.isprintable()) or " " in configured:
            raise OctomemError("setting http_token (OCTOMEM_HTTP_TOKEN): the token must be "
                               "printable ASCII without spaces (an HTTP header carries ASCII)")
        if not address.loopback and len(configured) < MIN_TOKEN_CHARS:
            raise OctomemError(
                f"setting http_token (OCTOMEM_HTTP_TOKEN): the token must be at least "
                f"{MIN_TOKEN_CHARS} characters long on {address.host}, which is not loopback "
                "(e.g. $(openssl rand -hex 32))")
        return configured, False
    if address.loopback:
        return None, False
    return secrets.token_urlsafe(32), True


#: Default of setting ``http_session_idle_s``: the SDK's own default (30 minutes).
DEFAULT_SESSION_IDLE_S = 1800.0


async def serve_http(server: Any, address: Address, token: str | None,
                     max_body: tuple[int, str] = DEFAULT_BODY_LIMIT,
                     session_idle_s: float = DEFAULT_SESSION_IDLE_S) -> None:
    """Serve ``server`` (an :class:`~mcp.server.mcpserver.MCPServer`) over streamable HTTP
    at ``address`` until interrupted (Ctrl-C / SIGTERM), behind :class:`BearerTokenGuard`
    when ``token`` is set and :func:`host_checks` on a loopback bind. Prints the URL to
    stderr once listening.

    :param max_body: the largest request body, bytes, and the setting it follows
        (:func:`.body_limit.body_limit`); a larger one is answered 413 with a JSON-RPC error
        naming the setting. A request holding a lone surrogate gets ``-32602`` with its
        id, as over stdio (:mod:`.http_unicode`). A client that ends its session while a
        message it sent is being delivered is one INFO line, not a traceback
        (:mod:`.http_gone`).
    :param session_idle_s: setting ``http_session_idle_s``: a session without a request in
        flight (none being served, no open GET stream) for this many seconds is closed by
        the SDK's session manager (``session_idle_timeout``) and everything it holds freed;
        its id is then answered 404, and the client starts a new session.
    :raises AddressError: the address cannot be bound (in use, not this machine's).
    """
    quiet_gone_clients()
    answers = OpenAnswers(server.streamable_http_app(
        host=address.host, transport_security=host_checks(address),
        max_request_body_size=max_body[0], session_idle_timeout=session_idle_s))
    gate = StoppingGate(ClientGoneAnswer(answers))
    app: Any = SurrogateAnswer(BodyLimitAnswer(gate, max_body))
    if token:
        app = BearerTokenGuard(app, token)
    config = uvicorn.Config(app, host=address.host, port=address.port, log_config=None,
                            access_log=False, server_header=False, lifespan="on")
    running: RunningCalls = getattr(server, "running", None) or RunningCalls()
    runner = StoppingServer(config, running, gate)
    AppStatus.disable_automatic_graceful_drain()  # streams end once the calls are answered
    AppStatus.should_exit = False

    async def announce() -> None:
        while not runner.started and not runner.should_exit:
            await anyio.sleep(0.02)
        if runner.started:
            port = runner.servers[0].sockets[0].getsockname()[1]
            guard = "bearer token required" if token else "no token: loopback only"
            print(f"octomem: MCP over streamable HTTP at {address.url(MCP_PATH, port)} "
                  f"({guard})", file=sys.stderr, flush=True)

    async with anyio.create_task_group() as group:
        group.start_soon(announce)
        group.start_soon(end_streams_when_answered, runner, running, answers)
        try:
            await runner.serve()
        except SystemExit:  # uvicorn's way out when it cannot bind (it logged why)
            pass
        group.cancel_scope.cancel()
    if not runner.started:
        raise AddressError(f"cannot listen on {address.url()[len('http://'):]} (the port was "
                           "taken after it was checked; see the log line above)")


#: How often a stopping server looks whether its running calls have ended (seconds).
STOP_POLL_S = 0.05
#: The longest a stopping server waits for the answers of its ended calls to be written
#: (seconds): a bound for a client that stops reading its answer; an answer is written
#: milliseconds after its call returns (:class:`.open_answers.OpenAnswers`).
ANSWER_LIMIT_S = 10.0
#: After the answers of the calls it waited for, a stopping server keeps listening until
#: no request came for this long (seconds), so a client's ``tools/list`` sent right after
#: its answer is answered (:mod:`.draining`) ...
QUIET_S = 2.0
#: ... but no longer than this in all (seconds).
QUIET_LIMIT_S = 10.0


class StoppingServer(uvicorn.Server):
    """uvicorn's server, stopped the way :mod:`.stopping` says: the first SIGTERM or
    Ctrl-C asks the running writes to stop early (one stderr line naming them) and, while
    they run, keeps listening for what a stopping server still answers (``gate``:
    :mod:`.draining`) until :func:`end_streams_when_answered` stops it; with no call
    running it stops listening at once. A second signal while calls still run ends the
    process at once.

    :param running: the server's running tool calls.
    :param gate: the middleware told that the server is stopping.
    """

    def __init__(self, config: uvicorn.Config, running: RunningCalls,
                 gate: StoppingGate | None = None) -> None:
        super().__init__(config)
        self.running = running
        self.gate = gate
        self.signals = 0
        #: the first signal, while the server finishes its calls still listening
        self.draining: int | None = None

    def handle_exit(self, sig: int, frame: Any) -> None:
        """Handle SIGTERM or SIGINT (uvicorn installs this as the handler of both)."""
        self.signals += 1
        if self.signals > 1 and self.running.busy():
            print(f"octomem: stopping now: {self.running.describe()} not finished; what is "
                  "stored stays, `octomem reindex` embeds the rest", file=sys.stderr, flush=True)
            exit_now(128 + int(sig))
        if self.signals == 1:
            line = self.running.request_stop("stopping")
            if line is not None:
                print(f"octomem: {line}", file=sys.stderr, flush=True)
                if self.gate is not None:
                    self.gate.stopping = True
                    self.draining = sig
                    return
        super().handle_exit(sig, frame)

    def stop_listening(self) -> None:
        """End a drain: stop as uvicorn does on the signal that began it (re-raised when
        the server has stopped)."""
        if self.draining is not None and not self.should_exit:
            super().handle_exit(self.draining, None)


async def end_streams_when_answered(runner: uvicorn.Server, running: RunningCalls,
                                    answers: OpenAnswers) -> None:
    """Once ``runner`` is stopping, no tool call runs any more and every answer has been
    written (``answers``; at most :data:`ANSWER_LIMIT_S` after the calls end), and, when
    it kept listening meanwhile, no request came for :data:`QUIET_S` (a client's
    ``tools/list`` after its answer), stop listening and end every open event stream
    (sse-starlette's shutdown flag), so uvicorn's wait for its connections ends."""
    while not runner.should_exit and getattr(runner, "draining", None) is None:
        await anyio.sleep(STOP_POLL_S)
    while running.busy():
        await anyio.sleep(STOP_POLL_S)
    with anyio.move_on_after(ANSWER_LIMIT_S):
        await answers.written()
    if isinstance(runner, StoppingServer) and not runner.should_exit:  # it drains
        await answers.quiet(QUIET_S, QUIET_LIMIT_S, lambda: runner.should_exit)
        runner.stop_listening()
    AppStatus.should_exit = True
