"""The ``octomem`` command line: commands (:mod:`.commands`), ``octomem bench``
(:mod:`.bench`), memory commands' output (:mod:`.memory`), tables and listings
(:mod:`.render`), ``octomem verify`` (:mod:`.verify`), the call log and metrics commands
(:mod:`.observe`), and ``octomem ui`` (:mod:`.view`).

Each command imports the engine (pydantic, numpy, the plugins) when it runs, not when this
package is imported: ``octomem --help`` loads typer and rich only.

The console script is :func:`main` (:mod:`.entry`: every error as one line);
:data:`app` is the typer application (tests drive it with typer's ``CliRunner``).
"""

from __future__ import annotations

from . import bench as _bench  # noqa: F401  (registers `octomem bench` on app, after the others)
from . import observe as _observe  # noqa: F401  (registers `log tail` and `metrics` on app)
from . import verify as _verify  # noqa: F401  (registers `octomem verify` on app)
from . import view as _view  # noqa: F401  (registers `octomem ui` on app)
from .commands import app
from .entry import main

__all__ = ["app", "main"]
