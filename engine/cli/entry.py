"""The console entry point: run the typer app and turn every failure into one line.

- A usage error (unknown option or command, missing argument, bad value) is one line on
  stderr naming what was wrong and pointing to the command's ``--help``, exit status 2
  (click's own status for usage errors), instead of typer's multi-line box.
- An octomem or file-system error is one line, exit status 1 (``--debug``: the traceback).
- Ctrl-C ends with status 130 (128 + SIGINT, the shell's convention); a command that
  can say what it left done says so first (``ingest``).

Only typer and rich are imported here: the entry point stays light.
"""

from __future__ import annotations

import sys
from typing import Any

import typer
from rich.console import Console
from rich.text import Text

from ..errors import OctomemError

#: Exit status of a usage error (click's ``UsageError.exit_code``).
USAGE_STATUS = 2
#: click's base error, found through typer's public ``BadParameter`` (typer 0.29 vendors
#: click as ``typer._click``; older typers use click itself).
ClickException: type[Exception] = next(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def usage_line(exc: Any) -> str:
    """Return a click error as one line: ``error: MESSAGE; see `octomem CMD --help```.

    :param exc: the error click raised while parsing the command line.
    """
    message = " ".join(exc.format_message().split()).rstrip(".")
    ctx = getattr(exc, "ctx", None)
    if ctx is not None and ctx.command.get_help_option(ctx) is not None:
        joint = " See" if message.endswith("?") else "; see"  # "Did you mean 'search'?"
        return f"error: {message}{joint} `{ctx.command_path} --help`"
    return f"error: {message}"


#: The engine names a bad argument by its field (the MCP tools' argument names); on the
#: command line the same value came from an option.
OPTION_OF_FIELD = {"top_k": "--top-k", "scope": "--scope", "as_of": "--as-of",
                   "since": "--since", "until": "--until", "kinds": "--kind", "kind": "--kind",
                   "tags": "--tag", "max_tokens": "--max-tokens", "context": "--context",
                   "per": "--per", "event_time": "--event-time", "supersedes": "--supersedes"}


def as_option(message: str) -> str:
    """Rename a leading ``field:`` of an engine error to the option the value came from
    (``top_k: 5,000 is more than ...`` -> ``--top-k: 5,000 is more than ...``)."""
    field, sep, rest = message.partition(": ")
    return f"{OPTION_OF_FIELD[field]}: {rest}" if sep and field in OPTION_OF_FIELD else message


def main() -> None:
    """Console entry point (``octomem``): run the command; usage errors, octomem errors and
    file-system errors as one line on stderr (``--debug`` shows the traceback)."""
    from .commands import app, state

    err = Console(stderr=True, soft_wrap=True, highlight=False)
    try:
        status: Any = app(prog_name="octomem", standalone_mode=False)
    except ClickException as exc:
        if type(exc).__name__ != "NoArgsIsHelpError":  # that one printed the help
            err.print(Text(usage_line(exc)))
        sys.exit(getattr(exc, "exit_code", USAGE_STATUS))
    except typer.Abort:  # EOF at a prompt
        err.print(Text("aborted"))
        sys.exit(1)
    except (OctomemError, OSError) as exc:
        if state.debug:
            raise
        message = as_option(str(exc)) if isinstance(exc, OctomemError) else os_error(exc)
        err.print(Text.assemble(("error: ", "red"), message))
        sys.exit(1)
    except KeyboardInterrupt:  # outside a command (commands end with status 130 themselves)
        err.print(Text("interrupted"))
        sys.exit(130)
    sys.exit(status if isinstance(status, int) else 0)


def os_error(exc: OSError) -> str:
    """Describe a file-system error in one line, naming the path."""
    where = f"{exc.filename}: " if exc.filename else ""
    return f"{where}{exc.strerror or exc}"
