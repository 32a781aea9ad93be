"""Times in the JSONL export as ISO-8601 text that reads back to the same float.

The export shows times as everything else does — ISO-8601 UTC (``2025-06-07T20:02:00Z``)
— yet must stay lossless: an import compares documents field by field, so a time that
comes back a microsecond off would make an unchanged document look changed. So the
fraction of a second is written with exactly the digits of the float's shortest
round-trip form (``repr``): ``1749326520.123456`` -> ``2025-06-08T...:00.123456Z``, and
read back as whole seconds plus that decimal fraction, which gives the same float
(``float(repr(x)) == x``; the sum is exact in :mod:`decimal` at 28 digits, against the
≤ 17 significant digits of a ``repr``).
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from decimal import ROUND_FLOOR, Decimal, InvalidOperation

_ISO = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d:\d\d)?$")


def exact_iso(ts: float) -> str:
    """Return epoch seconds as ISO-8601 UTC with exactly the fraction ``repr(ts)`` has.

    :param ts: finite epoch seconds within the calendar (years 1-9999).
    :raises ValueError: ``ts`` is not finite or outside the calendar.
    """
    if not math.isfinite(ts):
        raise ValueError(f"{ts!r} is not a time")
    exact = Decimal(repr(float(ts)))
    whole = exact.to_integral_value(rounding=ROUND_FLOOR)
    fraction = format(exact - whole, "f").rstrip("0").rstrip(".")  # "0.125" or "0"
    stamp = datetime.fromtimestamp(int(whole), UTC).replace(tzinfo=None).isoformat()
    return f"{stamp}{fraction[1:] if fraction != '0' else ''}Z"


def exact_epoch(value: object, name: str) -> float:
    """Return a time of an export as epoch seconds: ISO-8601 text as :func:`exact_iso`
    writes it (any zone), or a number (the export format 1's epoch seconds).

    :param name: the field, for the error message.
    :raises ValueError: naming ``name``: neither a number nor such a text.
    """
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    match = _ISO.match(value) if isinstance(value, str) else None
    if match is None:
        raise ValueError(f"{name}: {value!r} is not an ISO-8601 time like "
                         "2025-06-07T20:02:00Z (nor epoch seconds)")
    base, fraction, zone = match.groups()
    try:
        moment = datetime.fromisoformat(base + ("+00:00" if zone in (None, "Z") else zone))
        whole = int(moment.timestamp())
        return float(Decimal(whole) + Decimal(fraction or "0"))
    except (ValueError, OverflowError, InvalidOperation) as exc:
        raise ValueError(f"{name}: {value!r} is not a time ({exc})") from None
