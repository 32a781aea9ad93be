"""The bounded recency bonus: newer statements win ties, never against a clearly better match.

``score' = score × (1 + w × 2^(−age / h))``, with ``w`` = ``retrieval.recency_weight``
(0 ≤ w ≤ 0.1) and ``h`` = ``retrieval.recency_half_life_days``. ``age`` is the time from
the statement's ``valid_from`` (its event time, else when it was recorded) to the moment
the query is about (``as_of``, else now), never negative.

The bonus is at most ``w`` of the fused score, so a hit can overtake another only when
its fused score is within a factor ``1 + w`` of it. RRF scores are flat (k = 60: ranks 1
and 2 in both arms give 0.03279 and 0.03226, 1.6 % apart), so the default w = 0.01
breaks exact ties (ranks 1 and 2 swapped between two arms) and near ties (rank 1 in both
arms against ranks 1 and 2, 0.8 % apart), and never lifts a hit that is a place lower
in every arm, nor anything weaker; 0.1, the most allowed, would let a new statement
jump about six places. The bonus halves every ``h`` days (default 30); a statement
whose ``valid_from`` is now gets the full ``w``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

SECONDS_PER_DAY = 86_400.0
#: Default weight (fraction of the fused score) and half-life (days); see the module text.
DEFAULT_WEIGHT = 0.01
DEFAULT_HALF_LIFE_DAYS = 30.0
#: The bonus is never more than this fraction of the fused score (issue 4's bound).
MAX_WEIGHT = 0.1


def recency_bonus(valid_from: float, now: float, weight: float, half_life_days: float) -> float:
    """Return the bonus as a fraction of the fused score, in ``[0, weight]``.

    :param valid_from: when the statement became true, epoch seconds.
    :param now: the moment the query is about, epoch seconds.
    :param weight: the bonus for age 0, clamped to ``[0, MAX_WEIGHT]``.
    :param half_life_days: days after which the bonus halves, > 0.
    :raises ValueError: ``half_life_days`` is not positive.
    """
    return bonus_of(now, weight, half_life_days)(valid_from)


def bonus_of(now: float, weight: float, half_life_days: float) -> Callable[[float], float]:
    """Return ``valid_from -> recency_bonus(valid_from, now, weight, half_life_days)`` with
    the checks done once and each distinct ``valid_from`` computed once (a recall asks for
    ~200 candidates, and a conversation's turns share their session's time).

    :raises ValueError: ``half_life_days`` is not positive.
    """
    if half_life_days <= 0:
        raise ValueError(f"half_life_days must be > 0, got {half_life_days}")
    weight = min(max(weight, 0.0), MAX_WEIGHT)
    known: dict[float, float] = {}

    def bonus(valid_from: float) -> float:
        value = known.get(valid_from)
        if value is None:
            age_days = max(now - valid_from, 0.0) / SECONDS_PER_DAY
            value = known[valid_from] = weight * math.pow(2.0, -age_days / half_life_days)
        return value

    return bonus
