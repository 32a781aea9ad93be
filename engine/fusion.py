"""Combining runs from several arms into one ranking."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

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
    if k < 1:
        raise ValueError(f"rrf k must be >= 1, got {k}")
    weights = weights or {}
    fused = _collect(runs)
    for entry in fused.values():
        entry.score = sum([
            weights.get(arm, 1.0) / (k + hit.rank) for arm, hit in entry.contributions.items()
        ])
    return _ordered(fused)


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
