"""Exact top-k pruning of the ``fts5`` arm's OR-queries: rank only rows that can still win.

Every row's BM25 score is below the sum of its phrases' bounds
(:mod:`octomem.plugins.fts5.bounds`). Given tau, a lower bound of the k-th best score,
only rows whose bound sum reaches tau can be in the top k; FTS5 finds them with the
expression from :func:`~octomem.plugins.fts5.bounds.bound_filter`, and they are ranked
by ``bm25()`` over the *whole* query, so their scores are bit-identical to the plain
statement's. If the k-th score found is at least tau, every other row (score below its
bound sum, below tau) is out of the top k and the answer is exact; otherwise the plain
statement runs.

tau comes from a probe: the rarest phrases alone, ranked by ``bm25()`` with the filters;
their scores are lower bounds of the full scores (contributions are >= 0).

Pruning costs a count of each phrase's rows, the probe, and a pass over the rows of the
whole query (``rowid IN`` the bound filter's rows), so it runs only where it was
measured to win (SciFact's test queries over 10k-100k chunks, interleaved with the plain
ranking, load ~1.5-2 on 2 shared cores): large indexes and small k, see
:data:`MIN_INDEX_ROWS`, :data:`MAX_K`, :data:`MIN_ROWS` and :data:`PRUNE_FRACTION`. Its
p95 is worse than the plain ranking's (30.5 against 28.6 ms at 100k, k = 10): the
longest queries pay the counts and the probe and are then not pruned.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

from octomem.engine.types import Filters
from octomem.plugins.fts5.bounds import SLACK, bound_filter

#: Rows the probe may rank, as a fraction of all phrase rows (sum of n_i). At 100k
#: chunks, k = 10, a larger probe leaves fewer rows to rank (0.02 / 0.05 / 0.1: 17% / 13%
#: / 9% of the matching rows, simulated with unlimited bound filters) but costs more when
#: pruning is then refused; summed over the 300 queries 0.01 cost 3781 ms against 4156 ms
#: unpruned, 0.02: 4284 ms against 4188 ms, 0.05: 4760 ms against 4036 ms.
PROBE_FRACTION = 0.01

#: Below this many rows in the index the plain ranking runs without counting anything:
#: p50 at k = 10, 10k chunks: 1.96 ms plain against 2.45 ms pruned; 30k: 4.23 against
#: 4.61 ms; 100k: 12.3 against 10.2 ms.
MIN_INDEX_ROWS = 50_000

#: Largest k pruned: at 100k chunks p50 12.3 -> 10.2 ms at k = 10, 12.6 -> 11.5 ms at
#: k = 30, but 13.7 -> 15.0 ms at k = 100 (tau, the k-th probe score, is lower).
MAX_K = 30

#: Below this many phrase rows (sum of n_i) the plain ranking runs. A guard for small
#: queries on large indexes; at 100k, k = 10, p50 was 9.29 ms with it and without it.
MIN_ROWS = 8000

#: Prune only when the bound filter is expected to keep at most this fraction of the
#: rows matching any phrase (independent phrases assumed). p50 at 100k, k = 10: 10.13 ms
#: at 0.2, 9.29 ms at 0.3, 9.43 ms at 0.5 (plain ranking 11.5-12.1 ms in the same runs).
PRUNE_FRACTION = 0.3


class Ranker(Protocol):
    """What the pruning needs from the SQL side (:class:`~.ranking.Fts5Ranker`)."""

    def row_count(self) -> int: ...

    def phrase_hits(self, phrases: Sequence[str]) -> list[int]: ...

    def top(
        self, expression: str, filters: Filters, k: int, within: str | None = None
    ) -> list[tuple[int, float]]: ...


def probe_count(hits: Sequence[int], k: int, budget: float) -> int:
    """Return how many of the rarest phrases the probe ranks.

    :param hits: rows matching each phrase, rarest first.
    :param k: hits wanted; phrases are taken until their rows reach ``k``, then more
        while their rows stay within ``budget``.
    :returns: a count in ``[1, len(hits)]``.
    """
    total = 0
    for m, n_hit in enumerate(hits):
        if total >= k and total + n_hit > budget:
            return max(m, 1)
        total += n_hit
    return len(hits)


def kth_score(hits: Sequence[tuple[int, float]], k: int) -> float:
    """Return the score of the k-th hit, or ``-inf`` when there are fewer than ``k``."""
    return hits[k - 1][1] if len(hits) >= k else -math.inf


def union_rows(hits: Sequence[int], n_rows: int) -> float:
    """Return the rows expected to match any phrase, assuming independent phrases."""
    missing = 1.0
    for n_hit in hits:
        missing *= 1.0 - min(n_hit, n_rows) / max(n_rows, 1)
    return n_rows * (1.0 - missing)


def pruned_top(
    ranker: Ranker, phrases: Sequence[str], filters: Filters, k: int
) -> list[tuple[int, float]]:
    """Return the same top ``k`` as ranking every row matching any of ``phrases``.

    :param ranker: runs the statements on one FTS5 table.
    :param phrases: FTS5 phrase strings (each quoted), in query order; a row's score is
        ``-bm25()`` over all of them OR-ed in this order.
    :param filters: restrictions applied inside every ranking.
    :param k: number of hits, >= 1.
    :returns: ``(chunk id, score)`` best first, ties by ascending id.
    """
    whole = " OR ".join(phrases)
    if len(phrases) < 2 or k > MAX_K:
        return ranker.top(whole, filters, k)
    n_rows = ranker.row_count()
    if n_rows < MIN_INDEX_ROWS:
        return ranker.top(whole, filters, k)
    hits = ranker.phrase_hits(phrases)
    if sum(hits) < MIN_ROWS:
        return ranker.top(whole, filters, k)
    rarest = sorted(range(len(phrases)), key=lambda i: (hits[i], i))
    probed = probe_count([hits[i] for i in rarest], k, PROBE_FRACTION * sum(hits))
    if probed >= len(phrases):
        return ranker.top(whole, filters, k)
    probe = ranker.top(" OR ".join(phrases[i] for i in rarest[:probed]), filters, k)
    tau = kth_score(probe, k) * (1.0 - SLACK)
    within = bound_filter(phrases, hits, n_rows, tau) if tau > 0.0 else None
    if within is None or within.rows > PRUNE_FRACTION * union_rows(hits, n_rows):
        return ranker.top(whole, filters, k)
    top = ranker.top(whole, filters, k, within=within.expression)
    if kth_score(top, k) >= tau:
        return top
    return ranker.top(whole, filters, k)
