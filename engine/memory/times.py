"""Reading the times callers give (``event_time``, ``since``, ``until``, ``as_of``).

A time is an ISO-8601 date (``2025-03-01``) or date and time (``2025-03-01T14:30``,
``2025-03-01T14:30:00+02:00``); a time without a zone is UTC. Internally every time is
seconds since the Unix epoch (UTC), a float.

Every time is checked at the door (:func:`check_time`): it must fall between
:data:`EARLIEST` and :data:`LATEST`, so that it can always be shown again as an ISO date
(Python's calendar ends at year 9999: ``9999-12-31T23:59:59-14:00`` is in year 10000 in
UTC, and a stored time like that once made every recall returning it fail).
"""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime, time, timedelta
from typing import Literal

from ..errors import InvalidQueryError

#: The earliest and latest instant octomem keeps (epoch seconds): the calendar's years 1
#: to 9999 less a day at each end, so any instant between renders in any time zone.
EARLIEST = datetime(1, 1, 2, tzinfo=UTC).timestamp()
LATEST = datetime(9999, 12, 31, tzinfo=UTC).timestamp()
#: The range as people read it (both ends are midnight UTC; the end is excluded).
_RANGE = "0001-01-02T00:00Z up to 9999-12-31T00:00Z"

#: An ISO-8601 date whose year Python's calendar has no room for: year 0000 (ISO's 1 BC)
#: or an expanded year (``+10000-01-01``, ``-0044-03-15``).
_YEAR_OUTSIDE = re.compile(r"(?:0000|[+-]\d{4,6})-\d{2}-\d{2}(?:[T ].*)?")

#: Which instant of a bare date a bound means: its first moment, or the first moment of
#: the next day (an exclusive end, so ``until=2025-03-01`` keeps all of March 1st).
DateEdge = Literal["start", "end"]


def _as_utc(moment: datetime) -> datetime:
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def in_range(ts: float) -> bool:
    """Return True when ``ts`` (epoch seconds) is a finite number octomem can keep and show."""
    return isinstance(ts, int | float) and not isinstance(ts, bool) and \
        math.isfinite(ts) and EARLIEST <= ts <= LATEST


def check_time(ts: float, argument: str, shown: object = None) -> float:
    """Return ``ts`` if it is within :data:`EARLIEST` .. :data:`LATEST`.

    :param argument: the argument's name, for the error message.
    :param shown: what the caller wrote (default: ``ts``).
    :raises InvalidQueryError: naming ``argument``; nothing was stored.
    """
    if not in_range(ts):
        raise InvalidQueryError(
            f"{argument}: {ts if shown is None else shown!r:.80} is outside the times octomem "
            f"keeps ({_RANGE})")
    return float(ts)


def parse_time(
    value: str | float | int | None, argument: str, edge: DateEdge = "start"
) -> float | None:
    """Return ``value`` as epoch seconds; ``None`` stays ``None``.

    :param value: an ISO-8601 date or datetime string, or epoch seconds.
    :param argument: the argument's name, for the error message.
    :param edge: for a bare date, its first moment (``"start"``) or the next day's first
        moment (``"end"``).
    :raises InvalidQueryError: naming ``argument`` when the text is not ISO-8601 or the
        time is outside :data:`EARLIEST` .. :data:`LATEST`.
    """
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return check_time(value, argument)
    text = str(value).strip()
    try:
        if len(text) == 10:  # YYYY-MM-DD
            day = date.fromisoformat(text)
            if edge == "end":
                day += timedelta(days=1)
            moment = datetime.combine(day, time(), UTC).timestamp()
        else:
            moment = _as_utc(datetime.fromisoformat(text.replace("Z", "+00:00"))).timestamp()
    except OverflowError:  # the day after 9999-12-31
        moment = math.inf
    except ValueError:
        if _YEAR_OUTSIDE.fullmatch(text):  # a valid ISO date, before or after the range
            raise InvalidQueryError(
                f"{argument}: {text!r:.80} is outside the times octomem keeps ({_RANGE})"
            ) from None
        raise InvalidQueryError(
            f"{argument}: {text!r:.80} is not an ISO-8601 date or time; use e.g. 2025-03-01 or "
            "2025-03-01T14:30:00Z"
        ) from None
    return check_time(moment, argument, text)


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


class StoredTimeError(ValueError):
    """A stored time cannot be shown (written before times were checked at the door)."""


def iso(ts: float | None) -> str | None:
    """Format epoch seconds as ISO-8601 UTC to the second (``None`` stays ``None``).

    :raises StoredTimeError: ``ts`` is not a finite number within the calendar.
    """
    if ts is None:
        return None
    try:
        return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds")
    except (ValueError, OverflowError, OSError, TypeError) as exc:
        raise StoredTimeError(f"the time {ts!r} cannot be shown ({exc})") from None


def iso_or_none(ts: float | None) -> str | None:
    """Like :func:`iso`, but ``None`` for a time that cannot be shown."""
    try:
        return iso(ts)
    except StoredTimeError:
        return None


def unshowable_times(**times: float | None) -> list[str]:
    """Name the given times (``created_at=...``) that are set but cannot be shown."""
    return [f"{name} {ts!r}" for name, ts in times.items() if ts is not None and not in_range(ts)]
