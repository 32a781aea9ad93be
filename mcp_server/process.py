"""Serving over stdio as a process of its own (:func:`.serve.serve`): a hint for a person at
a terminal, and an exit as soon as the client closes stdin.

A client ends the server by closing its stdin. What follows must be quick (clients
wait for the process, and some restart it): the requests read before are answered (an
ingest stops before its next embedding batch: :mod:`.stopping`), the server stops, the
memory is closed when
its loading has finished, and then the process ends with :func:`os._exit` — skipping the
interpreter's teardown, which otherwise costs about 0.7 s of CPU collecting garbage
across every imported module (1.5–3 s of wall time on a busy 2-core machine, measured
with ``perf``), and which, while the model is still loading on its background thread,
had to wait for that load (``SHUTDOWN_WAIT_S``) because tearing down onnxruntime under a
running load aborts the process. Writes never wait for the teardown: each is its own
committed SQLite transaction.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
from typing import NoReturn


def program_path(argv0: str) -> str:
    """Return the absolute path of the program ``argv0`` names (as found on ``PATH``)."""
    return os.path.abspath(shutil.which(argv0) or argv0)


def terminal_hint(command: str) -> str:
    """Return the one line ``serve`` prints to stderr when a person runs it at a terminal.

    :param command: the command line a client should run to start this server.
    """
    return ("octomem speaks MCP on stdio: it waits for an MCP client, not for typing. "
            f"Configure a client to start it, e.g. `claude mcp add octomem -- {command}` "
            "(README: MCP clients). Ctrl-D or Ctrl-C quits.")


def exit_now(status: int) -> NoReturn:
    """Flush stdout, stderr and the log handlers, then end the process at once.

    :param status: the exit status.
    """
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # closed by the client: nothing left to say
            pass
    os._exit(status)


def client_command(argv: list[str]) -> str:
    """Return the command line a client runs to start this server, from how this process
    was started: ``/abs/path/octomem serve`` or ``python -m octomem.mcp_server``."""
    if argv and os.path.basename(argv[0]) != "__main__.py":
        return f"{program_path(argv[0])} serve"
    return f"{sys.executable} -m octomem.mcp_server"


def say_what_this_is(argv: list[str]) -> None:
    """At a terminal (stdin a tty), print :func:`terminal_hint` on one stderr line."""
    if sys.stdin.isatty():
        print(terminal_hint(client_command(argv)), file=sys.stderr, flush=True)
