"""The server's logs: stderr only, as text or as one JSON object per line.

``serve --log-format json`` writes each record as one JSON object (``ts``, ``level``,
``logger``, ``message``, plus the record's structured fields: a tool call's ``tool``,
``latency_ms``, ``outcome`` and ``hits``); ``text`` (the default) writes
``time level logger: message``. ``--log-level`` sets the root level. stdout is never
written: over stdio it carries the protocol.
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


def configure_logging(fmt: str = "text", level: str = "INFO") -> None:
    """Send every log record to stderr in ``fmt`` at ``level`` and above (replacing any
    handler set before, e.g. the ``mcp`` SDK's).

    :param fmt: ``text`` or ``json``.
    :param level: ``DEBUG``, ``INFO``, ``WARNING`` or ``ERROR`` (any case).
    :raises OctomemError: an unknown format or level, named.
    """
    if fmt not in LOG_FORMATS:
        raise OctomemError(f"--log-format: must be text or json, got {fmt!r}")
    if level.upper() not in LOG_LEVELS:
        raise OctomemError(f"--log-level: must be one of {', '.join(LOG_LEVELS)}, got {level!r}")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else logging.Formatter(TEXT_FORMAT))
    logging.basicConfig(level=level.upper(), handlers=[handler], force=True)
