"""Combining runs from several arms into one ranking."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .turns import CONVERSATION, POSITION
from .types import Hit, Run

#: RRF constant from Cormack, Clarke & Buettcher, "Reciprocal Rank Fusion outperforms
#: Condorcet and individual rank learning methods", SIGIR 2009 (k=60).
RRF_K = 60


@dataclass(slots=True)
class Fused:
    """One chunk's fused score and every arm's own hit for it."""

    chunk_id: int
    score: float
    contributions: dict[str, Hit] = field(default_factory=dict)


def _collect(runs: Sequence[Run]) -> dict[int, Fused]:
    fused: dict[int, Fused] = {}
    for run in runs:
        for hit in run:
            entry = fused.get(hit.chunk_id)
            if entry is None:
                entry = fused[hit.chunk_id] = Fused(hit.chunk_id, 0.0, {hit.arm: hit})
            else:
                entry.contributions.setdefault(hit.arm, hit)
    return fused


def _ordered(fused: dict[int, Fused]) -> list[Fused]:
    # Ties are broken by chunk id so that fusion is deterministic.
    return sorted(fused.values(), key=lambda f: (-f.score, f.chunk_id))


def reciprocal_rank_fusion(
    runs: Sequence[Run], k: int = RRF_K, weights: Mapping[str, float] | None = None
) -> list[Fused]:
    """Fuse runs by reciprocal rank: score(d) = sum over arms of w_arm / (k + rank_arm(d)).

    Reciprocal rank fusion (Cormack, Clarke & Buettcher, SIGIR 2009), k=60 by default;
    ``w_arm`` defaults to 1.0 (the paper's unweighted form).

    :param runs: one run per arm, each best first with 1-based ranks.
    :param k: the RRF constant, >= 1; larger values flatten the rank discount.
    :param weights: optional weight per arm name.
    :returns: fused entries, highest score first, ties broken by ascending chunk id.
    :raises ValueError: ``k < 1``.
    """
    return list(rrf_ranking(runs, k, weights))


class FusedRanking(Sequence[Fused]):
    """:func:`reciprocal_rank_fusion`'s entries, best first, each made a :class:`Fused`
    when read (a search reads its first ``depth``: ~30 of ~170 for two runs of 100)."""

    __slots__ = ("_contributions", "_ids", "_scores")

    def __init__(self, ids: list[int], scores: dict[int, float],
                 contributions: dict[int, dict[str, Hit]]) -> None:
        self._ids, self._scores, self._contributions = ids, scores, contributions

    def __len__(self) -> int:
        return len(self._ids)

    def _entry(self, chunk_id: int) -> Fused:
        return Fused(chunk_id, self._scores[chunk_id], self._contributions[chunk_id])

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self._entry(c) for c in self._ids[index]]
        return self._entry(self._ids[index])

    def columns(self) -> tuple[list[int], list[float], list[dict[str, Hit]]]:
        """Return every entry's chunk id, score and contributions, best first, as three
        lists (what reading each :class:`Fused` gives, without making one per entry)."""
        ids, scores, contributions = self._ids, self._scores, self._contributions
        return ids, list(map(scores.__getitem__, ids)), list(map(contributions.__getitem__, ids))


def rrf_ranking(
    runs: Sequence[Run], k: int = RRF_K, weights: Mapping[str, float] | None = None
) -> FusedRanking:
    """Return :func:`reciprocal_rank_fusion` of ``runs`` as a :class:`FusedRanking`: the
    same entries in the same order, built only when read (0.7x the time of the list for
    the first 30 of two runs of 100, SciFact claims at 10k).

    Each chunk's terms are added in the order of its contributions, from 0 (as ``sum()``
    over them would: 0.0 + the first term, ...); an arm's second hit for a chunk adds
    nothing. Ordered by score descending, then chunk id ascending (one sort by id, then a
    stable sort by score, reversed).

    :raises ValueError: ``k < 1``.
    """
    if k < 1:
        raise ValueError(f"rrf k must be >= 1, got {k}")
    weights = weights or {}
    scores: dict[int, float] = {}
    contributions: dict[int, dict[str, Hit]] = {}
    entry_of = contributions.get
    for run in runs:
        for hit in run:
            chunk_id = hit.chunk_id
            entry = entry_of(chunk_id)
            if entry is None:
                contributions[chunk_id] = {hit.arm: hit}
                scores[chunk_id] = 0.0 + weights.get(hit.arm, 1.0) / (k + hit.rank)
            elif hit.arm not in entry:
                entry[hit.arm] = hit
                scores[chunk_id] += weights.get(hit.arm, 1.0) / (k + hit.rank)
    ids = sorted(scores)
    ids.sort(key=scores.__getitem__, reverse=True)  # stable: ties keep ascending ids
    return FusedRanking(ids, scores, contributions)


def weighted_score_fusion(
    runs: Sequence[Run], weights: Mapping[str, float] | None = None
) -> list[Fused]:
    """Fuse runs by a weighted sum of min-max normalised scores (CombSUM, Fox & Shaw 1994).

    Each run's scores are rescaled to [0, 1] over that run (a run whose scores are all
    equal maps to 1.0); a chunk absent from a run gets 0 from it.

    :param weights: weight per arm name, default 1.0.
    :returns: fused entries, highest score first, ties broken by ascending chunk id.
    """
    weights = weights or {}
    fused = _collect(runs)
    for run in runs:
        if not run:
            continue
        scores = [h.score for h in run]
        lo, hi = min(scores), max(scores)
        for hit in run:
            norm = 1.0 if hi == lo else (hit.score - lo) / (hi - lo)
            fused[hit.chunk_id].score += weights.get(hit.arm, 1.0) * norm
    return _ordered(fused)


def arm_bounds(entries: Sequence[Any]) -> dict[str, tuple[float, float]]:
    """Return each arm's lowest and highest raw score over ``entries``' contributions.

    Given every fused entry, these are each arm's run's bounds (every hit of every run
    is some entry's contribution): the min-max scale of :func:`weighted_score_fusion`.

    :param entries: fused entries (anything with ``contributions: {arm: Hit}``).
    """
    lows: dict[str, float] = {}
    highs: dict[str, float] = {}
    for entry in entries:  # min()/max() of each arm's scores, without a tuple per hit
        for arm, hit in entry.contributions.items():
            score = hit.score
            low = lows.get(arm)
            if low is None:
                lows[arm] = highs[arm] = score
            elif score < low:
                lows[arm] = score
            elif score > highs[arm]:
                highs[arm] = score
    return {arm: (low, highs[arm]) for arm, low in lows.items()}


def run_bounds(runs: Sequence[Run]) -> dict[str, tuple[float, float]] | None:
    """Return :func:`arm_bounds` of the entries fusing ``runs``, read from the runs
    themselves (a list of scores per run, ``min``/``max`` in C: 0.4x the time of a loop
    over ~170 entries' contributions), or ``None`` when the runs are not one arm each, every
    chunk once (then only :func:`arm_bounds` of the entries is exact: an entry keeps the
    first of an arm's hits for its chunk)."""
    bounds: dict[str, tuple[float, float]] = {}
    for run in runs:
        if not run:
            continue
        arm = run[0].arm
        if arm in bounds or any(h.arm != arm for h in run) or (
                len({h.chunk_id for h in run}) != len(run)):
            return None
        scores = [h.score for h in run]
        bounds[arm] = (min(scores), max(scores))
    return bounds


def weighted_score(contributions: Mapping[str, Hit], bounds: Mapping[str, tuple[float, float]],
                   weights: Mapping[str, float] | None = None) -> float:
    """Return one entry's :func:`weighted_score_fusion` score from its arms' raw scores
    and each arm's run bounds (:func:`arm_bounds`); an arm without bounds counts 0."""
    weights = weights or {}
    total = 0.0
    for arm, hit in contributions.items():
        if arm not in bounds:
            continue
        lo, hi = bounds[arm]
        total += weights.get(arm, 1.0) * (1.0 if hi == lo else (hit.score - lo) / (hi - lo))
    return total


H = TypeVar("H")


def reorder_places(hits: list[H], moves: Callable[[H], bool],
                   key: Callable[[H], Any]) -> list[H]:
    """Re-order the hits for which ``moves(hit)`` holds among the places they hold, by
    ascending ``key`` (ties in their current order); every other hit stays put.

    :returns: a new list of the same hits.
    """
    places = [i for i, h in enumerate(hits) if moves(h)]
    ordered = sorted(places, key=lambda i: key(hits[i]))  # stable: ties keep their order
    out = list(hits)
    for place, i in zip(places, ordered, strict=True):
        out[place] = hits[i]
    return out


def is_turn(chunk: Any) -> bool:
    """Return True for a conversation turn's chunk (metadata naming its conversation and
    position, as transcript ingest writes; what the ``conversation`` reranker re-scores)."""
    metadata = chunk.metadata
    return metadata.get(CONVERSATION) is not None and metadata.get(POSITION) is not None


def order_documents(hits: list[H], entries: Sequence[Any], fusion: str, document_fusion: str,
                    weights: Mapping[str, float] | None = None,
                    bounds: Mapping[str, tuple[float, float]] | None = None) -> list[H]:
    """Re-order the hits that are not conversation turns among the places they hold by
    weighted score fusion, when ``document_fusion`` is ``"weighted"`` and ``fusion`` is
    not (``retrieval.document_fusion``); turns and the places they hold stay as fused.

    :param hits: loaded hits, fused order (``.chunk``, ``.contributions``; a recall hit's
        ``.recency`` bonus multiplies its score as it does the fused one).
    :param entries: every fused entry (the arms' run bounds, :func:`arm_bounds`).
    :param bounds: those bounds when the caller has them (:func:`run_bounds`).
    :returns: ``hits`` itself when nothing moves, else a new list.
    """
    if document_fusion != "weighted" or fusion == "weighted" or not hits:
        return hits
    if all(is_turn(h.chunk) for h in hits):  # nothing moves (a conversation's store)
        return hits
    bounds = arm_bounds(entries) if bounds is None else bounds

    def key(hit: Any) -> tuple[float, int]:  # ties by chunk id, as in weighted fusion
        score = weighted_score(hit.contributions, bounds, weights)
        return -score * (1.0 + getattr(hit, "recency", 0.0)), hit.chunk.id

    return reorder_places(hits, lambda h: not is_turn(h.chunk), key)


def order_values(hits: Sequence[Any], entries: Sequence[Any], fusion: str,
                 document_fusion: str, weights: Mapping[str, float] | None = None
                 ) -> list[float]:
    """Return the value each of ``hits`` was ordered by, higher first: its weighted score
    (:func:`weighted_score` × (1 + recency), as :func:`order_documents` orders a hit
    that is not a turn under ``document_fusion`` "weighted"), else its ``score``. Two
    hits of equal value tie: the order between them says nothing (e.g. the first of
    the keyword run and the first of the semantic run, each in one run only)."""
    weighted = document_fusion == "weighted" and fusion != "weighted"
    turns = [is_turn(h.chunk) for h in hits] if weighted else []
    if not weighted or all(turns):  # every value a score: no bounds to read (~170 entries)
        return [float(h.score) for h in hits]
    bounds = arm_bounds(entries)
    return [float(h.score) if turn else weighted_score(h.contributions, bounds, weights)
            * (1.0 + getattr(h, "recency", 0.0)) for h, turn in zip(hits, turns, strict=True)]
