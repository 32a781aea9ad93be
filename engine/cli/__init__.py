"""The ``octomem`` command line: commands (:mod:`.commands`), memory commands' output
(:mod:`.memory`) and tables and listings (:mod:`.render`).

The console script is :func:`main`; :data:`app` is the typer application (tests drive it
with typer's ``CliRunner``).
"""

from __future__ import annotations

from .commands import app, main

__all__ = ["app", "main"]
