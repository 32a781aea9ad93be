"""Reading the times callers give (``event_time``, ``since``, ``until``, ``as_of``).

A time is an ISO-8601 date (``2025-03-01``) or date and time (``2025-03-01T14:30``,
``2025-03-01T14:30:00+02:00``); a time without a zone is UTC. Internally every time is
seconds since the Unix epoch (UTC), a float.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Literal

from ..errors import InvalidQueryError

#: Which instant of a bare date a bound means: its first moment, or the first moment of
#: the next day (an exclusive end, so ``until=2025-03-01`` keeps all of March 1st).
DateEdge = Literal["start", "end"]


def _as_utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def parse_time(
    value: str | float | int | None, argument: str, edge: DateEdge = "start"
) -> float | None:
    """Return ``value`` as epoch seconds; ``None`` stays ``None``.

    :param value: an ISO-8601 date or datetime string, or epoch seconds.
    :param argument: the argument's name, for the error message.
    :param edge: for a bare date, its first moment (``"start"``) or the next day's first
        moment (``"end"``).
    :raises InvalidQueryError: naming ``argument`` when the text is not ISO-8601.
    """
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    text = str(value).strip()
    try:
        if len(text) == 10:  # YYYY-MM-DD
            day = date.fromisoformat(text)
            if edge == "end":
                day += timedelta(days=1)
            return datetime.combine(day, time(), UTC).timestamp()
        return _as_utc(datetime.fromisoformat(text.replace("Z", "+00:00"))).timestamp()
    except ValueError:
        raise InvalidQueryError(
            f"{argument}: {text!r} is not an ISO-8601 date or time; use e.g. 2025-03-01 or "
            "2025-03-01T14:30:00Z"
        ) from None


def as_of_instant(value: str | float | int | None) -> float | None:
    """Return the instant an ``as_of`` asks about, epoch seconds.

    A bare date means the end of that day (what was current when the day ended); a
    datetime means that instant.

    :raises InvalidQueryError: naming ``as_of``.
    """
    if value is None:
        return None
    if isinstance(value, str) and len(value.strip()) == 10:
        end = parse_time(value, "as_of", "end")
        return None if end is None else end - 1e-6
    return parse_time(value, "as_of")


def iso(ts: float | None) -> str | None:
    """Format epoch seconds as ISO-8601 UTC to the second (``None`` stays ``None``)."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds")
