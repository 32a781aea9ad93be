"""Who may reach the browser view: loopback by default, a token when remote, Host checked.

- **Bind.** :func:`check_bind` refuses a non-loopback address unless ``allow_remote``; with
  ``allow_remote`` an access token is required (``OCTOMEM_UI_TOKEN``, else generated).
- **Host header.** Every request's ``Host`` must name the server as it was bound
  (``127.0.0.1``, ``localhost`` or ``[::1]`` on a loopback bind, with the bound port), so a
  page of another site cannot reach the view through a name that resolves to 127.0.0.1
  (DNS rebinding). A server bound to every interface (``0.0.0.0``, ``::``) cannot know
  the names it is reached by; there the token is the guard.
- **Token.** With ``allow_remote``, every request carries the token: ``Authorization:
  Bearer <token>``, or the ``octomem_ui`` cookie that ``/?token=<token>`` sets once.
- **Headers.** Every answer forbids framing, inline script and sniffing (CSP).

Write forms carry a second, per-server token (:attr:`Guard.form_token`); the write
routes check it (:mod:`.writes`).
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

from octomem.engine.errors import OctomemError, UsageValueError

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Environment variable holding the access token for a remote view.
TOKEN_ENV = "OCTOMEM_UI_TOKEN"
#: Cookie that carries the access token after ``/?token=...``.
COOKIE = "octomem_ui"
#: Names a loopback-bound view answers to (besides the bound address itself).
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
#: Security headers of every answer: no framing, scripts and styles from the view only.
SECURITY_HEADERS = (
    (b"content-security-policy", b"default-src 'self'; img-src 'self' data:; "
     b"frame-ancestors 'none'; form-action 'self'; base-uri 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
)


class UiAccessError(OctomemError):
    """The view was asked to listen where it may not (a remote address without
    ``--allow-remote``), or with an unusable token."""


class UiHostError(UiAccessError, UsageValueError):
    """A non-loopback ``--host`` without ``--allow-remote``: the caller's mistake (a usage
    error on the command line)."""


def is_loopback(host: str) -> bool:
    """Return True for ``localhost`` and any address in 127.0.0.0/8 or ``::1``."""
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    """Return True for the every-interface addresses ``0.0.0.0`` and ``::``."""
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


@dataclass(frozen=True)
class Guard:
    """The checks every request passes, fixed when the server starts.

    :param host: the address the server listens on.
    :param port: its TCP port (the ``Host`` header must name it).
    :param access_token: required on every request when set (remote views).
    :param form_token: carried by every write form (per server, random).
    """

    host: str
    port: int
    access_token: str | None = None
    form_token: str = field(default_factory=lambda: secrets.token_urlsafe(24))

    def host_allowed(self, header: str) -> bool:
        """Return True when a ``Host`` header names this server (see the module doc)."""
        name, port = split_host(header)
        if not name or (port or "80") != str(self.port):
            return False
        if is_wildcard(self.host):
            return True
        names = {self.host.strip("[]").lower()}
        if is_loopback(self.host):
            names |= set(LOOPBACK_NAMES)
        return name in names

    def token_ok(self, given: str | None) -> bool:
        """Compare a presented access token in constant time."""
        return self.access_token is None or (
            given is not None and hmac.compare_digest(given.encode(), self.access_token.encode()))


def split_host(header: str) -> tuple[str, str]:
    """Split a ``Host`` header into ``(lowercase name, port or "")``; IPv6 in brackets."""
    header = header.strip()
    if header.startswith("["):
        end = header.find("]")
        rest = header[end + 1:] if end > 0 else ""
        return header[1:end].lower() if end > 0 else "", rest[1:] if rest[:1] == ":" else ""
    name, _, port = header.partition(":") if header.count(":") == 1 else (header, "", "")
    return name.lower(), port


def check_bind(host: str, allow_remote: bool, token: str | None = None) -> str | None:
    """Return the access token a server on ``host`` requires (``None`` on loopback).

    :param token: the token to use when remote (setting ``ui_token``, i.e.
        ``OCTOMEM_UI_TOKEN``: :func:`.options.with_token`), else a new random one the
        caller prints.
    :raises UiAccessError: a non-loopback ``host`` without ``allow_remote``, or a token
        shorter than 16 characters.
    """
    if is_loopback(host) and not allow_remote:
        return None
    if not allow_remote:
        raise UiHostError(
            f"{host}: the browser view listens on loopback addresses only (127.0.0.1, ::1); "
            "to serve other machines add --allow-remote (serve: --ui-allow-remote), which "
            "then requires a token")
    token = token or secrets.token_urlsafe(24)
    if len(token) < 16:
        raise UiAccessError(f"setting ui_token ({TOKEN_ENV}): the token must be at least "
                            "16 characters long")
    return token


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _presented_token(scope: Scope) -> tuple[str | None, str | None]:
    """Return ``(token from header or cookie, token from the query string)``."""
    auth = _header(scope, b"authorization") or ""
    if auth.lower().startswith("bearer "):
        return auth[7:].strip(), None
    cookie = SimpleCookie(_header(scope, b"cookie") or "")
    from_cookie = cookie[COOKIE].value if COOKIE in cookie else None
    query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
    return from_cookie, query.get("token")


async def _plain(send: Send, status: int, text: str, headers: list[tuple[bytes, bytes]] | None
                 = None) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()), *SECURITY_HEADERS, *(headers or [])]})
    await send({"type": "http.response.body", "body": body})


class GuardMiddleware:
    """ASGI middleware applying a :class:`Guard` to every HTTP request.

    Refusals are plain text: 421 for a foreign ``Host``, 401 without the token.
    """

    def __init__(self, app: App, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if not self.guard.host_allowed(_header(scope, b"host") or ""):
            await _plain(send, 421, "octomem: this view does not answer to that Host header")
            return
        held, in_query = _presented_token(scope)
        if in_query is not None and self.guard.token_ok(in_query) \
                and self.guard.access_token is not None:
            await self._login(scope, send)
            return
        if not self.guard.token_ok(held):
            await _plain(send, 401, "octomem: this view needs its token: open the URL the "
                         "server printed (…/?token=…) or send Authorization: Bearer <token>")
            return

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, send_secured)

    async def _login(self, scope: Scope, send: Send) -> None:
        """Set the token cookie and redirect to the same URL without ``token=``."""
        query = [(k, v) for k, v in parse_qsl(scope.get("query_string", b"").decode("latin-1"))
                 if k != "token"]
        target = scope.get("path", "/") + (f"?{urlencode(query)}" if query else "")
        cookie = f"{COOKIE}={self.guard.access_token}; HttpOnly; SameSite=Strict; Path=/"
        await _plain(send, 303, "signed in", [(b"location", target.encode()),
                                              (b"set-cookie", cookie.encode())])
