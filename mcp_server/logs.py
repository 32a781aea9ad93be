"""The server's logs: stderr only, as text or as one JSON object per line.

``serve --log-format json`` writes each record as one JSON object (``ts``, ``level``,
``logger``, ``message``, plus the record's structured fields: a tool call's ``tool``,
``latency_ms``, ``outcome`` and ``hits``); ``text`` (the default) writes
``time level logger: message``. ``--log-level`` sets the root level; without it the level
is :func:`default_level`'s: ``INFO`` (one line per tool call), but ``WARNING`` for a server
started by hand at a terminal over stdio, where a person reads only the one-line banner
(:func:`octomem.mcp_server.process.say_what_this_is`) until something goes wrong. The
libraries' own INFO lines (uvicorn's "Started server process", the ``mcp`` SDK's
"Processing request of type ...") are shown only at ``DEBUG``: octomem logs what a reader
needs itself. stdout is never written: over stdio it carries the protocol.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any, Literal

from octomem.engine.errors import OctomemError

LogFormat = Literal["text", "json"]
LOG_FORMATS: tuple[str, ...] = ("text", "json")
LOG_LEVELS: tuple[str, ...] = ("DEBUG", "INFO", "WARNING", "ERROR")
#: Structured fields a record may carry (``extra=``) that the JSON format writes out.
FIELDS = ("tool", "outcome", "latency_ms", "hits", "transport", "address")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
#: Loggers of the libraries the server runs on: WARNING and above unless the level is DEBUG.
LIBRARY_LOGGERS = ("mcp", "uvicorn", "httpx", "httpcore", "sse_starlette", "starlette")
#: The level without ``--log-level``: one line per tool call.
DEFAULT_LEVEL = "INFO"
#: The level without ``--log-level`` at a terminal over stdio: the banner only, then problems.
TERMINAL_LEVEL = "WARNING"


def default_level(http: bool, stdin_is_terminal: bool) -> str:
    """Return the log level a server uses when ``--log-level`` is not given.

    :param http: it serves streamable HTTP (else stdio).
    :param stdin_is_terminal: its stdin is a terminal: a person started it by hand (an MCP
        client over stdio gives it a pipe).
    :returns: :data:`TERMINAL_LEVEL` for stdio at a terminal, else :data:`DEFAULT_LEVEL`.
    """
    return TERMINAL_LEVEL if stdin_is_terminal and not http else DEFAULT_LEVEL


class JsonFormatter(logging.Formatter):
    """Format a record as one JSON object on one line (UTC time, ISO-8601, milliseconds)."""

    def format(self, record: logging.LogRecord) -> str:
        """Return the record as JSON: ``ts``, ``level``, ``logger``, ``message``, fields."""
        out: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname, "logger": record.name, "message": record.getMessage(),
        }
        out.update({k: getattr(record, k) for k in FIELDS if hasattr(record, k)})
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False, default=str)


class StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """A stream handler writing to ``sys.stderr`` as it is when a record comes, as
    :data:`logging.lastResort` does: a handler bound to the stream of its set-up time
    (a test runner's captured stderr, closed since) wrote "--- Logging error ---" and a
    traceback for every later record of the process."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property  # type: ignore[override]
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass  # always the current sys.stderr


def configure_logging(fmt: str = "text", level: str = "INFO") -> None:
    """Send every log record to stderr in ``fmt`` at ``level`` and above (replacing any
    handler set before, e.g. the ``mcp`` SDK's); :data:`LIBRARY_LOGGERS` at WARNING and
    above unless ``level`` is DEBUG.

    :param fmt: ``text`` or ``json``.
    :param level: ``DEBUG``, ``INFO``, ``WARNING`` or ``ERROR`` (any case).
    :raises OctomemError: an unknown format or level, named.
    """
    if fmt not in LOG_FORMATS:
        raise OctomemError(f"--log-format: must be text or json, got {fmt!r}")
    if level.upper() not in LOG_LEVELS:
        raise OctomemError(f"--log-level: must be one of {', '.join(LOG_LEVELS)}, got {level!r}")
    handler = StderrHandler()
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    logging.basicConfig(level=level.upper(), handlers=[handler], force=True)
    for name in LIBRARY_LOGGERS:
        library = logging.getLogger(name)
        library.setLevel(logging.NOTSET if level.upper() == "DEBUG" else logging.WARNING)
