"""Usage errors worded as the command line's others are: ``--option: what is wrong``, one
line, ``; see `octomem CMD --help```, exit status 2 (:func:`.entry.usage_line`).

- A number option's bounds are checked by :func:`bounded` (``--top-k: must be at least
  1, got 0``) instead of click's ``IntRange`` (``Input should be greater than or equal to
  1``, and ``N [x>=1]`` in ``--help``); the help says the bound in its own words.
- A usage error click raises while parsing (``Option '--tag' requires an argument``)
  carries no command, so it could not point to the command's ``--help``:
  :func:`with_context` gives it the command being parsed.

Only typer is imported here: ``octomem --help`` stays light.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

#: click's usage error (status 2), found through typer's public ``BadParameter`` (typer
#: 0.29 vendors click as ``typer._click``; older typers use click itself).
UsageError: type[Exception] = next(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "UsageError")


def bounded(option: str, least: int, most: int | None = None
            ) -> Callable[[typer.Context, int | None], int | None]:
    """Return a typer callback that refuses a value of ``option`` below ``least`` or
    above ``most`` as a usage error: ``--top-k: must be at least 1, got 0``.

    :param option: the option's name as typed (``--top-k``).
    :param least: the smallest value accepted.
    :param most: the largest value accepted (``None``: no ceiling here).
    """
    def check(ctx: typer.Context, value: int | None) -> int | None:
        if value is None:
            return value
        if value < least or (most is not None and value > most):
            bound = (f"at least {least:,}" if most is None
                     else f"from {least:,} to {most:,}")
            ctx.fail(f"{option}: must be {bound}, got {value:,}")
        return value
    return check


def with_context(exc: Any, ctx: Any) -> Any:
    """Give a usage error raised while parsing ``ctx``'s command line that command's
    context (click's parser raises some without one), and return it."""
    if isinstance(exc, UsageError) and getattr(exc, "ctx", None) is None:
        exc.ctx = ctx  # type: ignore[attr-defined]
    return exc
