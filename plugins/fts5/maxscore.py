"""Exact top-k pruning of the in-RAM postings: MaxScore over term-at-a-time numpy arrays.

:meth:`.postings.PostingIndex.ranked` adds every posting of every query term into a
dense score array. At 1M chunks of the realistic scale corpus a SciFact claim touches
~390k postings (p50; p95 ~960k), and the keyword arm took 35 ms alone, 86 ms beside the
vector arm on 2 cores. Most of those postings belong to common terms whose whole BM25
contribution cannot lift a chunk into the top k on its own.

MaxScore (Turtle & Flood, "Query evaluation: strategies and optimizations", IP&M 31(6),
1995) splits the terms by an upper bound of their contribution: once the k-th best
score seen, theta, exceeds the sum of the bounds of the remaining terms, a chunk
holding none of the terms already scored cannot reach the top k, so those
*non-essential* terms are no longer scanned; they are only looked up for the
candidates found so far (``searchsorted`` in their ascending slot lists), and a
candidate is dropped as soon as its partial score plus the bounds of the terms not yet
looked up falls below theta. Terms are scored rarest bound first (term-at-a-time, as
:mod:`.postings` does), theta is the k-th best partial score of the chunks seen, a
lower bound of the k-th best full score (every contribution is > 0).

The bound of a term is ``idf * f (k1 + 1) / (f + n_min)`` with ``f`` its largest count
in a chunk and ``n_min`` the smallest ``k1 (1 - b + b D / avgdl)`` of any chunk: the
BM25 fraction grows with the count and shrinks with the length. At 1M chunks (SciFact
test claims, k = 100), were the final theta known from the start, the essential terms
would hold 17 % of the postings with this bound, 15 % with each term's exact maximum,
19 % with ``k1 + 1``; theta growing as terms are scored, 24 % are scanned (p50 78k of
393k), and the keyword arm's p50 fell from 97-154 to 42-68 ms at load 8-9 (same hits).

Two steps keep the rest of the work in proportion to what changes
(``benchmarks/results/synthetic/2026-12-02/keyword``: -18 % of the arm's CPU at 1M,
the same answers): theta is the k-th best of the previous best k and of this term's
postings that beat it, not of every chunk seen (scores only grow, so no other chunk
can enter the best k); and a non-essential term with many candidates is looked up
through the dense score buffer (:func:`lookup_dense`) instead of binary searches.

The answer is the exhaustive ranking's to the last bit: the surviving candidates are
scored again term by term in query order with the same float64 expression, so each
sum is the same sequence of additions (adding 0.0 for an absent term changes nothing),
and every chunk left out had an upper bound below a lower bound of the k-th score (so
it cannot even tie). A property test holds this against the exhaustive path.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Protocol

import numpy as np

#: FTS5's ``bm25()`` constants (``fts5_aux.c``: k1 = 1.2, b = 0.75).
K1 = 1.2
B = 0.75
#: Relative widening of every bound and comparison: far above the rounding of a sum of a
#: few hundred doubles (~1e-13), so float rounding never drops a chunk that could win.
SLACK = 1e-9
#: Prune only when the query's terms hold at least this many postings in all. Chosen on
#: SciFact *train* claims, k = 100, CPU time summed per bucket of postings, pruned over
#: exhaustive (2 shared cores, load 9-11): at 100k chunks 0.96 / 0.95 / 0.97 / 0.98 /
#: 0.92 for < 5k / 5-10k / 10-20k / 20-50k / 50-100k postings; at 1M 0.22 / 0.35 / 0.36
#: / 0.41 / 0.56 for 10-20k / 20-50k / 50-100k / 100-200k / 200k+ (there the exhaustive
#: path also scans a 1M-row score array). Never slower; below 10k the exhaustive sum
#: takes ~1 ms and is kept.
MIN_POSTINGS = 10_000
#: A non-essential term's postings are scattered into the dense buffer (and its
#: candidates read back from it) instead of binary-searched, when its candidates times
#: this exceed its postings: ``searchsorted`` costs ~log2(postings) random probes per
#: candidate, the scatter two passes over the postings. Chosen on SciFact *train*
#: claims (809) at 1M chunks of the realistic scale corpus, k = 100, the arm's CPU
#: summed over the code before: 2 -> 0.819, 4 -> 0.818, 8 -> 0.833 (load 11; the same
#: answers).
DENSE_LOOKUP = 4


class Postings(Protocol):
    """What the pruning reads from :class:`~.postings.PostingIndex`."""

    def live_postings(self, term: int) -> tuple[np.ndarray, np.ndarray]: ...

    def raw_parts(self, term: int) -> list[tuple[np.ndarray, np.ndarray]]: ...

    def live_count(self, term: int) -> int: ...


def idf(n_rows: int, n_hit: int) -> float:
    """Return FTS5's IDF ``ln((N - n + 0.5) / (n + 0.5))``, or 1e-6 when <= 0."""
    value = math.log((n_rows - n_hit + 0.5) / (n_hit + 0.5))
    return value if value > 0.0 else 1e-6


def contributions(idf_t: float, tf: np.ndarray, norm: np.ndarray) -> np.ndarray:
    """Return BM25 contributions, the exhaustive path's float64 expression exactly.

    :param tf: float64 ``(m,)`` counts. :param norm: float64 ``(m,)``
        ``k1 (1 - b + b D / avgdl)`` of the same chunks.
    """
    return idf_t * ((tf * (K1 + 1.0)) / (tf + norm))


def lookup(parts: list[tuple[np.ndarray, np.ndarray]], slots: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """Find ``slots`` in a term's postings.

    :param parts: ``(slots, tfs)`` arrays, each ascending by slot.
    :param slots: int64 ``(m,)`` slots looked up.
    :returns: bool ``(m,)`` found, and float64 ``(m,)`` counts (0 where not found).
    """
    found = np.zeros(len(slots), dtype=bool)
    tf = np.zeros(len(slots), dtype=np.float64)
    for part_slots, part_tfs in parts:
        if not len(part_slots):
            continue
        at = np.minimum(np.searchsorted(part_slots, slots), len(part_slots) - 1)
        hit = part_slots[at] == slots
        found |= hit
        tf[hit] = part_tfs[at[hit]]
    return found, tf


def lookup_dense(parts: list[tuple[np.ndarray, np.ndarray]], slots: np.ndarray,
                 buffer: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Find ``slots`` in a term's postings through a dense buffer: the same answer as
    :func:`lookup`, cheaper when ``slots`` are many against the postings.

    :param parts: ``(slots, tfs)`` arrays (every count >= 1).
    :param slots: int64 ``(m,)`` slots looked up.
    :param buffer: float64 ``(slots,)`` all zero; zero again on return.
    :returns: bool ``(m,)`` found, and float64 ``(m,)`` counts (0 where not found).
    """
    try:
        for part_slots, part_tfs in parts:
            buffer[part_slots] = part_tfs
        tf = buffer[slots]
    finally:
        for part_slots, _ in parts:
            buffer[part_slots] = 0.0
    return tf > 0.0, tf


def _top_slots(pool: np.ndarray, values: np.ndarray, k: int) -> tuple[np.ndarray, float]:
    """Return the slots of ``pool`` holding its ``k`` largest ``values`` (all when fewer)
    and the k-th largest value (0.0 when fewer than ``k``)."""
    if len(pool) < k:
        return pool, 0.0
    best = np.argpartition(values, len(values) - k)[len(values) - k:]
    return pool[best], float(values[best].min())


def _pool(top: np.ndarray, slots: np.ndarray) -> np.ndarray:
    """Return ``slots`` (ascending, distinct) and the ``top`` slots not among them: each once."""
    if not len(slots):
        return top
    at = np.minimum(np.searchsorted(slots, top), len(slots) - 1)
    return np.concatenate((top[slots[at] != top], slots))


def _kth(values: np.ndarray, k: int) -> float:
    """Return the k-th largest of ``values``, or 0.0 when there are fewer."""
    if len(values) < k:
        return 0.0
    return float(np.partition(values, len(values) - k)[len(values) - k])


class _Query:
    """One query's distinct terms, rarest bound first, with their IDF and bound."""

    def __init__(self, index: Postings, terms: Sequence[int], n_rows: int, tf_max: dict[int, int],
                 norm_min: float) -> None:
        self.terms = list(terms)  # query order, duplicates kept
        times = Counter(self.terms)
        self.idf = {t: idf(n_rows, index.live_count(t)) for t in times}
        bound = {t: times[t] * self.idf[t] * tf_max[t] * (K1 + 1.0) / (tf_max[t] + norm_min)
                 * (1.0 + SLACK) for t in times}
        self.order = sorted(times, key=lambda t: (-bound[t], t))
        self.times = times
        self.bound = [bound[t] for t in self.order]
        self.rest = [math.fsum(self.bound[j:]) for j in range(len(self.bound) + 1)]
        self.done = [math.fsum(self.bound[:j]) for j in range(len(self.bound) + 1)]


def pruned_top(index: Postings, terms: Sequence[int], n_rows: int, norm: np.ndarray,
               norm_min: float, tf_max: dict[int, int], passing: np.ndarray | None,
               limit: int, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the candidates of the top ``limit`` with their exact scores.

    :param terms: term ids of the query's tokens in query order (duplicates count twice);
        each has at least one live posting.
    :param n_rows: live chunks, N of the IDF.
    :param norm: float64 ``(slots,)`` ``k1 (1 - b + b D / avgdl)`` per slot.
    :param norm_min: a value <= every live slot's ``norm``.
    :param tf_max: per term, a count >= its largest count in a live chunk.
    :param passing: bool ``(slots,)`` allowed slots, or ``None`` for all.
    :param limit: k, >= 1.
    :param scores: float64 ``(slots,)`` all zero; used as the accumulator, zero again
        on return.
    :returns: int64 slots and their float64 scores (the exhaustive sums, bit for bit),
        unordered: a superset of the top ``limit`` (with its ties), every other chunk
        scoring strictly below it.
    """
    q = _Query(index, terms, n_rows, tf_max, norm_min)
    seen: list[np.ndarray] = []
    top: np.ndarray | None = None  # the slots of the best `limit` partial scores seen
    theta, done, kth = 0.0, 0, 0.0
    try:
        for j, term in enumerate(q.order):
            if theta > 0.0 and q.rest[j] < theta * (1.0 - SLACK):
                break  # the terms from j on are non-essential
            slots, tf = index.live_postings(term)
            if passing is not None:
                keep = passing[slots]
                slots, tf = slots[keep], tf[keep]
            before = scores[slots]  # one gather and one scatter, not a fancy +=
            seen.append(slots[before == 0.0])
            after = before + q.times[term] * contributions(q.idf[term], tf, norm[slots])
            scores[slots] = after
            done = j + 1
            if q.rest[done] < q.done[done]:  # theta may now exceed what is left
                # Scores only grow, so a slot outside the last best `limit` (each now at
                # least their k-th, `kth`) and outside this term's postings that beat
                # `kth` cannot be needed: the k-th best of all seen is that pool's.
                pool = np.concatenate(seen) if top is None else _pool(top, slots[after > kth])
                top, kth = _top_slots(pool, scores[pool], limit)
                if kth * (1.0 - SLACK) > q.rest[done]:  # what is left cannot lift the rest
                    theta = max(theta, kth)
        cand = np.concatenate(seen) if seen else np.zeros(0, dtype=np.int64)
        partial = scores[cand]
    finally:
        for slots in seen:
            scores[slots] = 0.0
    if done == len(q.order):  # every term was scored: keep only what reaches the k-th
        theta = _kth(partial, limit)
    for j in range(done, len(q.order)):  # non-essential: looked up for the candidates
        keep = partial + q.rest[j] >= theta * (1.0 - SLACK)
        cand, partial = cand[keep], partial[keep]
        term = q.order[j]
        parts = index.raw_parts(term)
        if len(cand) * DENSE_LOOKUP > sum(len(p[0]) for p in parts):
            found, tf = lookup_dense(parts, cand, scores)
        else:
            found, tf = lookup(parts, cand)
        partial[found] += q.times[term] * contributions(q.idf[term], tf[found], norm[cand[found]])
        theta = max(theta, _kth(partial, limit))
    cand = cand[partial >= theta * (1.0 - SLACK)]
    return cand, _exact(index, q, cand, norm)


def _exact(index: Postings, q: _Query, cand: np.ndarray, norm: np.ndarray) -> np.ndarray:
    """Score ``cand`` as the exhaustive path does: each token's contribution added in
    query order to a sum starting at 0.0."""
    total = np.zeros(len(cand), dtype=np.float64)
    found_tf = {t: lookup(index.raw_parts(t), cand) for t in q.order}
    for term in q.terms:
        found, tf = found_tf[term]
        total[found] += contributions(q.idf[term], tf[found], norm[cand[found]])
    return total
