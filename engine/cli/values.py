"""Values as people read them: counts with their noun (``1 file``), sizes (``3.41 MB``,
not ``3411968``), dates, and settings
written as a TOML file would hold them (``"sqlite"``, ``true``, not ``'sqlite'``, ``True``)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

_UNITS = ("B", "kB", "MB", "GB", "TB")


def plural(n: int, word: str, many: str | None = None) -> str:
    """Return ``n`` and ``word``, in the plural unless ``n`` is 1: ``1 file``, ``2 files``.

    :param many: the plural when it is not ``word + "s"`` (``entries``).
    """
    return f"{n:,} {word if n == 1 else many or word + 's'}"


def human_size(n: int | float | None) -> str:
    """Return a byte count in SI units (powers of 1000) with three significant digits:
    ``3411968`` -> ``3.41 MB``.

    :param n: bytes, >= 0; ``None`` gives ``""``.
    """
    if n is None:
        return ""
    value, unit = float(n), 0
    while value >= 1000 and unit < len(_UNITS) - 1:
        value, unit = value / 1000, unit + 1
    if unit == 0:
        return f"{int(value)} B"
    return f"{value:.3g} {_UNITS[unit]}" if value < 100 else f"{value:.0f} {_UNITS[unit]}"


def human_time(ts: float | None) -> str:
    """Return epoch seconds as a UTC date and minute (``2025-06-07 21:02 UTC``)."""
    if ts is None:
        return ""
    when = datetime.fromtimestamp(ts, UTC)  # %Y drops a small year's zeros (glibc: 1-01-02)
    return f"{when.year:04d}" + when.strftime("-%m-%d %H:%M UTC")


def toml_value(value: Any) -> str:
    """Return ``value`` written as TOML would write it (strings in double quotes,
    ``true``/``false``, arrays, inline tables); ``None`` (not set) is ``(none)``, since
    TOML has no null."""
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict):
        inner = ", ".join(f"{_toml_key(k)} = {toml_value(v)}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(str(value))


def _toml_key(key: Any) -> str:
    text = str(key)
    bare = text.replace("_", "").replace("-", "").isalnum() and text.isascii()
    return text if bare else json.dumps(text)
