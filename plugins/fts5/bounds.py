"""Upper bounds of FTS5 BM25 contributions, and FTS5 expressions for rows that can reach a score.

FTS5's ``bm25()`` (``fts5_aux.c``; Robertson & Zaragoza 2009, k1 = 1.2, b = 0.75) adds,
for phrase i occurring f times in a row of D tokens (average ``avgdl``),

    idf_i * f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgdl)),
    idf_i = ln((N - n_i + 0.5) / (n_i + 0.5)), replaced by 1e-6 when <= 0,

with N the rows in the index and n_i the rows matching phrase i. The fraction is below
k1 + 1 for every finite f, so contribution i is below ``u_i = idf_i * (k1 + 1)`` (0 when
n_i = 0), the term bound of MaxScore (Turtle & Flood, IP&M 31(6), 1995), and a row's
score is below the sum of u_i over the phrases it contains, the document bound of WAND
(Broder et al., CIKM 2003). :func:`bound_filter` turns "bound sum >= tau" into an FTS5
expression, so FTS5 itself finds the rows that can still reach a score tau.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: FTS5 ``bm25()``'s fixed constants (``fts5_aux.c``).
K1 = 1.2
B = 0.75

#: Relative widening of every bound: far above the rounding of a sum of a few hundred
#: doubles (~1e-13), so float rounding never makes a bound too small.
SLACK = 1e-9

#: Most sub-expressions expanded, and most phrase occurrences (one FTS5 iterator each),
#: in a bound filter; past them the coarser MaxScore superset is used. 24 / 48 / 96 left
#: 26% / 21% / 16% of the matching rows at 100k chunks (k = 10), all ~7 ms: 48 kept.
MAX_PHRASES = 48


def idf(n_rows: int, n_hit: int) -> float:
    """Return FTS5's BM25 IDF, ``ln((N - n + 0.5) / (n + 0.5))``, or 1e-6 when <= 0.

    :param n_rows: rows in the index, N.
    :param n_hit: rows matching the phrase, n.
    """
    value = math.log((n_rows - n_hit + 0.5) / (n_hit + 0.5))
    return value if value > 0.0 else 1e-6


def upper_bound(n_rows: int, n_hit: int) -> float:
    """Return a value no contribution of the phrase reaches: ``idf * (k1 + 1)``, widened.

    :returns: 0 when ``n_hit`` is 0 (the phrase is in no row and adds nothing).
    """
    return 0.0 if n_hit == 0 else idf(n_rows, n_hit) * (K1 + 1.0) * (1.0 + SLACK)


@dataclass(frozen=True)
class BoundFilter:
    """An FTS5 expression matching (at least) every row whose bound sum reaches tau.

    :param expression: FTS5 query syntax over the quoted phrases.
    :param rows: rows it is expected to match, assuming phrases occur independently.
    :param phrases: phrase occurrences in ``expression``.
    """

    expression: str
    rows: float
    phrases: int


@dataclass(frozen=True)
class _Phrases:
    text: Sequence[str]  # sorted by bound, largest first
    bounds: Sequence[float]
    hits: Sequence[int]
    suffix: Sequence[float]  # suffix[i] = sum of bounds[i:]
    n_rows: int
    eps: float  # absolute rounding margin of the sums and differences below


_ALL = BoundFilter("<all rows>", math.inf, 0)


def bound_filter(
    phrases: Sequence[str], hits: Sequence[int], n_rows: int, tau: float
) -> BoundFilter | None:
    """Return an expression for the rows whose phrase bounds can sum to ``tau``.

    Rows containing phrases ``P`` qualify when the sum of ``upper_bound`` over ``P`` is
    at least ``tau``; recursively, over phrases sorted by bound, largest first:
    ``reach(i, need) = (p_i AND reach(i + 1, need - u_i)) OR reach(i + 1, need)``.

    :param phrases: FTS5 phrase strings (each quoted).
    :param hits: rows matching each phrase, same order.
    :param n_rows: rows in the index.
    :param tau: the score a row must be able to reach.
    :returns: the filter (it may match more rows than those, never fewer), or ``None``
        when every row or no row qualifies.
    """
    bounds = [upper_bound(n_rows, n) for n in hits]
    order = [i for i in sorted(range(len(phrases)), key=lambda i: (-bounds[i], i))
             if bounds[i] > 0.0]
    values = [bounds[i] for i in order]
    data = _Phrases([phrases[i] for i in order], values, [hits[i] for i in order],
                    [math.fsum(values[i:]) for i in range(len(values) + 1)], n_rows,
                    abs(tau) * 1e-12)
    found = _reach(data, 0, tau, [MAX_PHRASES])
    if found is None or found is _ALL:
        return None
    return found if found.phrases <= MAX_PHRASES else _essential(data, 0, tau)


def _reach(data: _Phrases, i: int, need: float, budget: list[int]) -> BoundFilter | None:
    """Rows whose phrases from ``i`` on can sum to ``need``; ``None``: no row, ``_ALL``: any."""
    if need <= data.eps:
        return _ALL
    if i >= len(data.bounds) or data.suffix[i] + data.eps < need:
        return None
    if budget[0] <= 0:
        return _essential(data, i, need)
    budget[0] -= 1
    rest = _reach(data, i + 1, need - data.bounds[i], budget)
    without = _reach(data, i + 1, need, budget)
    phrase = BoundFilter(data.text[i], float(data.hits[i]), 1)
    with_i = None if rest is None else phrase if rest is _ALL else _and(phrase, rest, data)
    if with_i is None or without is None:
        return with_i or without
    return _ALL if with_i is _ALL or without is _ALL else _or(with_i, without, data)


def _and(a: BoundFilter, b: BoundFilter, data: _Phrases) -> BoundFilter:
    rows = a.rows * b.rows / max(data.n_rows, 1)
    return BoundFilter(f"({a.expression} AND {b.expression})", rows, a.phrases + b.phrases)


def _or(a: BoundFilter, b: BoundFilter, data: _Phrases) -> BoundFilter:
    rows = a.rows + b.rows - a.rows * b.rows / max(data.n_rows, 1)
    return BoundFilter(f"({a.expression} OR {b.expression})", rows, a.phrases + b.phrases)


def _essential(data: _Phrases, i: int, need: float) -> BoundFilter:
    """Phrases from ``i`` a row needs at least one of to reach ``need`` (MaxScore)."""
    last = i
    while last + 1 < len(data.bounds) and data.suffix[last + 1] + data.eps >= need:
        last += 1
    found = BoundFilter(data.text[i], float(data.hits[i]), 1)
    for j in range(i + 1, last + 1):
        found = _or(found, BoundFilter(data.text[j], float(data.hits[j]), 1), data)
    return found
