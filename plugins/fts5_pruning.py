"""Exact top-k pruning of FTS5 BM25 OR-queries: MaxScore over query phrases.

MaxScore (Turtle & Flood, "Query evaluation: strategies and optimizations", Information
Processing & Management 31(6), 1995): a BM25 score is a sum of per-phrase contributions,
and each one is bounded. FTS5's ``bm25()`` (``fts5_aux.c``, k1 = 1.2, b = 0.75) adds,
for phrase i with f occurrences in a row of D tokens (average ``avgdl``),

    idf_i * f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgdl)),
    idf_i = ln((N - n_i + 0.5) / (n_i + 0.5)), replaced by 1e-6 when <= 0,

with N the rows in the index and n_i the rows matching phrase i. The fraction is below
k1 + 1 for every finite f, so a contribution is below ``idf_i * (k1 + 1)`` (0 when
n_i = 0: the phrase is in no row). Phrases sorted by that bound, largest (rarest) first,
split into *essential* ones and a tail of common ones whose bounds sum below the k-th
best score theta: a row matching only tail phrases scores below theta and cannot enter
the top k, so only rows matching an essential phrase are scored, by ``bm25()`` over the
whole query (bit-identical scores, see :mod:`octomem.plugins.fts5_ranking`).

Steps: count n_i per phrase; probe the rarest phrases (enough rows for ``k`` hits) with
a query of those phrases alone, whose scores are lower bounds of the full scores, so its
k-th best is a lower bound of theta; keep the shortest essential prefix whose tail is
below that; rank the rows matching it over the whole query; check the tail bound against
the k-th score found, and run the plain query when the check fails (never seen on
SciFact) or nothing can be pruned (one phrase, or too few hits).

What did not help (measured at 100k chunks, SciFact test queries, see the report in
the commit message): ranking inside FTS5 with a ``NOT`` sub-expression excluding rows
of the tail phrases also scored phrases of the sub-expression left positioned on the
current row (some scores doubled), so rows are restricted with ``rowid IN`` instead;
``rowid IN`` driving the full query row by row recomputes every IDF per row (~0.3 ms
each); exact per-phrase maxima instead of ``idf * (k1 + 1)`` prune only 20% of rows
instead of 28% for k = 10, not worth maintaining per-term statistics.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

from octomem.engine.types import Filters

#: FTS5 ``bm25()``'s fixed constants (``fts5_aux.c``).
K1 = 1.2
B = 0.75

#: Relative slack on a tail bound, far above the float rounding of a sum of a few
#: hundred contributions (~1e-13), so a rounded score never passes its bound.
BOUND_SLACK = 1e-9


class Ranker(Protocol):
    """What the pruning needs from the SQL side (:class:`~.fts5_ranking.Fts5Ranker`)."""

    def row_count(self) -> int: ...

    def phrase_hits(self, phrases: Sequence[str]) -> list[int]: ...

    def top(
        self, expression: str, filters: Filters, k: int, essential: str | None = None
    ) -> list[tuple[int, float]]: ...


def idf(n_rows: int, n_hit: int) -> float:
    """Return FTS5's BM25 IDF, ``ln((N - n + 0.5) / (n + 0.5))``, or 1e-6 when <= 0.

    :param n_rows: rows in the index, N.
    :param n_hit: rows matching the phrase, n.
    """
    value = math.log((n_rows - n_hit + 0.5) / (n_hit + 0.5))
    return value if value > 0.0 else 1e-6


def upper_bound(n_rows: int, n_hit: int) -> float:
    """Return a bound no contribution of a phrase reaches: ``idf * (k1 + 1)``, 0 if n = 0."""
    return 0.0 if n_hit == 0 else idf(n_rows, n_hit) * (K1 + 1.0)


def tail_bound(bounds: Sequence[float], start: int) -> float:
    """Return the slack-widened sum of ``bounds[start:]``: above any score of those phrases."""
    return math.fsum(bounds[start:]) * (1.0 + BOUND_SLACK)


def essential_count(bounds: Sequence[float], theta: float, start: int = 1) -> int:
    """Return the shortest prefix length m >= ``start`` whose tail bound is below ``theta``.

    :param bounds: phrase bounds, largest first.
    :param theta: a lower bound of the k-th best score (``-inf`` when unknown).
    :returns: m in ``[start, len(bounds)]``; ``len(bounds)`` means nothing can be pruned.
    """
    m = max(start, 1)
    while m < len(bounds) and tail_bound(bounds, m) >= theta:
        m += 1
    return min(m, len(bounds))


def probe_count(hits: Sequence[int], k: int) -> int:
    """Return how many of the rarest phrases (``hits`` sorted as probed) hold ``k`` rows."""
    total = 0
    for m, n_hit in enumerate(hits, 1):
        total += n_hit
        if total >= k:
            return m
    return len(hits)


def kth_score(hits: Sequence[tuple[int, float]], k: int) -> float:
    """Return the score of the k-th hit, or ``-inf`` when there are fewer than ``k``."""
    return hits[k - 1][1] if len(hits) >= k else -math.inf


def maxscore_top(
    ranker: Ranker, phrases: Sequence[str], filters: Filters, k: int,
) -> list[tuple[int, float]]:
    """Return the same top ``k`` as ranking every row matching any of ``phrases``.

    :param ranker: runs the statements on one FTS5 table.
    :param phrases: FTS5 phrase strings (each quoted), in query order; the score of a
        row is ``-bm25()`` over all of them OR-ed in this order.
    :param filters: restrictions applied inside every ranking.
    :param k: number of hits, >= 1.
    :returns: ``(chunk id, score)`` best first, ties by ascending id.
    """
    whole = " OR ".join(phrases)
    if len(phrases) < 2:
        return ranker.top(whole, filters, k)
    n_rows = ranker.row_count()
    hits = ranker.phrase_hits(phrases)
    bounds = [upper_bound(n_rows, n) for n in hits]
    order = sorted(range(len(phrases)), key=lambda i: (-bounds[i], i))
    sorted_bounds = [bounds[i] for i in order]
    probed = probe_count([hits[i] for i in order], k)
    if probed >= len(phrases):
        return ranker.top(whole, filters, k)
    probe = ranker.top(" OR ".join(phrases[i] for i in order[:probed]), filters, k)
    m = essential_count(sorted_bounds, kth_score(probe, k))
    if m >= len(phrases):
        return ranker.top(whole, filters, k)
    essential = " OR ".join(phrases[i] for i in order[:m])
    top = ranker.top(whole, filters, k, essential=essential)
    if tail_bound(sorted_bounds, m) < kth_score(top, k):
        return top
    return ranker.top(whole, filters, k)
