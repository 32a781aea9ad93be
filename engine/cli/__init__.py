"""The ``octomem`` command line: the group and most commands (:mod:`.commands`),
``octomem bench`` (:mod:`.bench`), memory commands' output (:mod:`.memory`), tables and
listings (:mod:`.render`), ``octomem verify`` (:mod:`.verify`), the call log and metrics
commands (:mod:`.observe`), and ``octomem ui`` (:mod:`.view`).

A fresh process loads only what its command needs: ``octomem --help`` draws its page from
:mod:`.catalog` without typer or any command module, and without rich where
:mod:`.fasthelp` draws exactly what rich would (plain POSIX terminals and pipes); a plain
``octomem search`` is read without typer (:mod:`.quick`); a command's module, and typer's
reading of its signature, load when that command runs or its own ``--help`` is asked
(:mod:`.lazy`); each command imports the engine (pydantic, numpy, the plugins) when it
runs.

The console script is :func:`main` (:mod:`.entry`: every error as one line);
:data:`app` is the typer application (tests drive it with typer's ``CliRunner``).
"""

from __future__ import annotations

import os
import sys

#: The environment variable with which a shell asks for completions (click's
#: ``_{PROG}_COMPLETE``): such a call has no arguments, yet is no call for help.
COMPLETE_VAR = "_OCTOMEM_COMPLETE"

#: What Ctrl-C says before a command began (while Python loads it and reads the command
#: line): nothing was done yet (trial 16 F4: a traceback, a bare "interrupted", or nothing).
NOT_STARTED = "interrupted before the command started: nothing was stored or changed"

#: Fewest columns output is laid out in (:class:`.layout.SafeConsole`, and help pages
#: through :func:`widen_columns`): a hit line's rank, relevance and scope, a few words,
#: and ``--explain``'s keyword column (trial 3 finding 26 made 30 columns read).
MIN_WIDTH = 30


def widen_columns() -> None:
    """Raise a ``COLUMNS`` below :data:`MIN_WIDTH` to it in this process's environment, so
    that every console (the help pages', typer's) lays out at least that wide: at
    ``COLUMNS=3`` the help came out one letter a line (trial 15 F14)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and 0 < int(columns) < MIN_WIDTH:
        os.environ["COLUMNS"] = str(MIN_WIDTH)


def main() -> None:
    """Console entry point (``octomem``).

    ``octomem --help`` (and ``octomem`` alone, a usage error with status 2 as click's) prints
    the top-level page from :mod:`.catalog` without importing typer or any command (nor
    rich, where :mod:`.fasthelp` can draw it); every other command line runs the typer
    application (:func:`.entry.main`).
    """
    args = sys.argv[1:]
    widen_columns()
    if args in ([], ["--help"]) and COMPLETE_VAR not in os.environ:
        from .catalog import top_page
        from .fasthelp import draw

        page = top_page()
        try:
            if not draw(page):  # a terminal rich treats otherwise: rich draws it
                from .helpview import print_page

                print_page(page)
            if args:
                print(flush=True)  # click echoes the (empty) help text typer's renderer leaves
        except BrokenPipeError:  # `octomem --help | head`: end quietly, 128 + SIGPIPE
            from .layout import pipe_closed

            sys.exit(pipe_closed())
        sys.exit(0 if args else 2)
    try:
        from .entry import main as run
    except KeyboardInterrupt:  # while Python loads it
        print(NOT_STARTED, file=sys.stderr, flush=True)
        sys.exit(130)
    run()


def __getattr__(name: str) -> object:
    """Return :data:`app` (typer and the group load on first use)."""
    if name == "app":
        from .commands import app

        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["app", "main"]
