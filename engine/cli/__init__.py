"""The ``octomem`` command line: commands (:mod:`.commands`), memory commands' output
(:mod:`.memory`), tables and listings (:mod:`.render`), ``octomem verify``
(:mod:`.verify`), the call log and metrics commands (:mod:`.observe`), and ``octomem ui``
(:mod:`.view`).

The console script is :func:`main`; :data:`app` is the typer application (tests drive it
with typer's ``CliRunner``).
"""

from __future__ import annotations

from . import observe as _observe  # noqa: F401  (registers `log tail` and `metrics` on app)
from . import verify as _verify  # noqa: F401  (registers `octomem verify` on app)
from . import view as _view  # noqa: F401  (registers `octomem ui` on app)
from .commands import app, main

__all__ = ["app", "main"]
