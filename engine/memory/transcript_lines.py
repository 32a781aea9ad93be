"""A transcript file's JSON Lines, read whole: one error naming every bad line.

What the transcript formats (:mod:`.transcripts`, :mod:`.claude_code`) share: reading
the lines (an unfinished last line left out with a note), :class:`TranscriptError` and
the one error naming each bad line, and reading a line's string and time fields.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import OctomemError
from ..turns import epoch, parse_turn_time
from .json_line import LineNotJSON, parse_line
from .times import in_range


class TranscriptError(OctomemError):
    """A transcript line that cannot be read; the message names the file and line."""


#: How many bad lines of one transcript an error names (then "and N more").
MAX_BAD_LINES = 20


def bad_lines(path: Path, bad: list[str]) -> TranscriptError:
    """Return one error naming every bad line of ``path`` (``FILE:LINE: why`` each, up to
    :data:`MAX_BAD_LINES`, then how many more)."""
    shown = "; ".join(bad[:MAX_BAD_LINES])
    more = f"; and {len(bad) - MAX_BAD_LINES} more bad lines" if len(bad) > MAX_BAD_LINES else ""
    return TranscriptError(shown + more)


def read_lines(path: Path, notes: list[str] | None = None, bad: list[str] | None = None,
               ) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for every non-blank line of a JSON Lines file (a
    leading UTF-8 byte-order mark dropped).

    The last line, when it has no newline at its end and is not valid JSON, is being
    written (Claude Code appends to the session it is in): it is left out with a note
    appended to ``notes`` (with ``notes`` given), and read on the next ingest.

    :param bad: when given, a line that is not JSON or not an object is appended here as
        ``FILE:LINE: why`` and passed over, instead of raised.
    :raises TranscriptError: a line is not JSON, or not a JSON object (no ``bad``); a byte
        is not UTF-8.
    """
    try:
        with path.open(encoding="utf-8-sig") as fh:  # a leading byte-order mark is dropped
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    row = parse_line(line.rstrip("\r\n"))  # columns count within the line
                except LineNotJSON as exc:
                    if notes is not None and not line.endswith("\n"):  # only the last can
                        notes.append(f"{path}:{lineno}: left out: the last line is not "
                                     "complete JSON yet (no newline at its end); it is read "
                                     "on the next ingest")
                        return
                    message = f"{path}:{lineno}: not valid JSON: {exc.why}"
                else:
                    if isinstance(row, dict):
                        yield lineno, row
                        continue
                    message = f"{path}:{lineno}: expected a JSON object, got " \
                        f"{type(row).__name__}"
                if bad is None:
                    raise TranscriptError(message)
                bad.append(message)
    except UnicodeDecodeError as exc:
        raise TranscriptError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") \
            from None



def string_field(row: dict[str, Any], key: str, where: str,
                 default: str | None = None, numbers: bool = True) -> str | None:
    """Return a line's ``key`` (``default`` when absent), stripped; ``None`` when neither
    is there. With ``numbers`` an integer is read as its digits (an id, a conversation or
    session number of an export); without, as for a turn's ``text`` and ``speaker``
    (trial 13 F8: ``"text": 5`` was stored as ``"5"``), it is refused like any other
    value that is not a string.

    :raises TranscriptError: the value is not a non-empty string (naming ``where``, and
        the value as JSON writes it: ``true``, ``["x"]``).
    """
    value = row.get(key, default)
    if value is None:
        return None
    if numbers and isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        shown = json.dumps(value, ensure_ascii=False)
        shown = shown if len(shown) <= 80 else shown[:79] + "…"
        raise TranscriptError(f"{where}: {key!r} must be a non-empty string, got {shown}")
    return value.strip()


def time_field(value: Any, where: str, key: str) -> datetime | None:
    """Return a line's time; one written without a zone is UTC (``2025-03-03 09:00`` is
    stored ``2025-03-03T09:00:00+00:00``, as every other time octomem stores).

    :raises TranscriptError: not a time, or outside the times octomem keeps.
    """
    try:
        moment = parse_turn_time(value)
    except ValueError as exc:
        raise TranscriptError(f"{where}: {key!r}: {exc}") from None
    if moment is not None and moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    if moment is not None and not in_range(epoch(moment) or 0.0):
        raise TranscriptError(f"{where}: {key!r}: {value!r} is outside the times octomem "
                              "keeps (0001-01-02T00:00Z up to 9999-12-31T00:00Z)")
    return moment
