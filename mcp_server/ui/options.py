"""How the browser view is served (kept free of web imports: the CLI builds it)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

#: The view's default port (the MCP HTTP transport's is 8765).
DEFAULT_PORT = 8766


@dataclass(frozen=True)
class UiOptions:
    """How the view is served.

    :param host: address to listen on (loopback unless ``allow_remote``).
    :param port: TCP port (0: any free port).
    :param allow_writes: offer remember and forget on the pages.
    :param allow_remote: allow a non-loopback ``host``; every request then needs the token.
    :param token: the access token of a remote view (default: setting ``ui_token``, i.e.
        ``OCTOMEM_UI_TOKEN``, else generated and printed).
    """

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    allow_writes: bool = False
    allow_remote: bool = False
    token: str | None = None


def with_token(options: UiOptions, settings: Any) -> UiOptions:
    """Return ``options`` with the token of setting ``ui_token`` (``settings``: the loaded
    :class:`~octomem.engine.settings.Settings`) when none was given."""
    token = settings.ui_token
    if options.token is not None or token is None:
        return options
    return replace(options, token=token.get_secret_value())
