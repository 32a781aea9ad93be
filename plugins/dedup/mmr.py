"""Dedup ``mmr``: reorder an answer for diversity by maximal marginal relevance.

Maximal marginal relevance (Carbonell & Goldstein, "The Use of MMR, Diversity-Based
Reranking for Reordering Documents and Producing Summaries", SIGIR 1998) builds the
answer greedily: the next hit is the remaining one with the largest

    MR(d) = λ · rel(d) − (1 − λ) · max_{s ∈ S} sim(d, s)

where ``S`` is the hits already chosen. Here:

- ``rel`` is the fused score normalised to [0, 1] within the list: the hit at position
  ``i`` gets ``(s_(i) − lo) / (s_(1) − lo)``, where ``s_(i)`` is the i-th largest fused
  score and ``lo = min(0, lowest score)``. For the non-negative scores of RRF and
  weighted fusion that is ``s / s_max``, which keeps the spacing fusion gave (min-max
  would set the last candidate's relevance to 0 whatever its score). Relevance follows
  the order the hits arrive in: if a reranker reordered them without touching their
  fused scores, the reranked order still decides. All scores equal: every ``rel`` is 1.
- ``sim`` is the cosine of the two hits' vectors. A hit without a vector (a zero row,
  or ``vectors`` is ``None``) is similar to another only through identical text (1.0,
  else 0.0); identical texts (after case folding and whitespace normalisation) are
  collapsed into the better-ranked copy first, as the ``cosine`` dedup does.

The first hit is always kept first (nothing is chosen before it, so its MR is λ·1).
A hit whose MR falls below ``min_marginal_relevance`` when it would be chosen is
dropped — MR only falls as more hits are chosen, so every hit left at that point goes —
and reported in ``collapsed`` with its MR, relevance and largest similarity, naming the
chosen hit it is most similar to. Fused scores, contributions and the answer's other
fields are left as they are; only the order (and ranks) change.

Default λ (option ``relevance_weight``) = 0.7: Carbonell & Goldstein suggest a small λ
(around 0.3) to survey an information space and a larger one (around 0.7) to focus on
relevant documents; an agent's recall is the focused case. RRF compresses relevance
(rank 10 in both arms still has rel 0.87), so λ = 0.9 hardly moves a near-copy
(cosine 0.97, rel 0.98: MR 0.785) below a distinct hit (cosine 0.2, rel 0.87: MR
0.763), while λ = 0.7 does (0.395 vs 0.549). Measured on BEIR SciFact (fts5 + MiniLM,
one relevant document per query, so diversity cannot help there), nDCG@10 is 0.7155
with ``cosine``, 0.7099 at λ = 0.9, 0.6990 at λ = 0.7 and 0.6596 at λ = 0.5. Default
``min_marginal_relevance`` = 0: a hit is dropped only when its redundancy outweighs its
relevance, ``(1 − λ)·sim > λ·rel``; with λ = 0.7 that is ``rel < 0.43·sim``, e.g. a
paraphrase at cosine 0.95 whose relevance is below 0.41 of the best. MR lies in [−1, 1],
so ``-1`` reorders without dropping.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from octomem.engine.arms import ArmContext, ArmSpec
from octomem.engine.types import Collapsed, FusedHit
from octomem.plugins.dedup.cosine import IDENTICAL_TEXT, normalise_text

if TYPE_CHECKING:  # numpy is imported where arrays are made: registering the plugin stays light
    import numpy as np

NAME = "mmr"


class MmrOptions(BaseModel, extra="forbid", defer_build=True, allow_inf_nan=False):
    """Options of the ``mmr`` dedup (settings table ``[arms.mmr]``)."""

    relevance_weight: float = Field(
        default=0.7, ge=0.0, le=1.0,
        description="λ: weight of relevance; 1 − λ weighs redundancy (1 = relevance order)",
    )
    min_marginal_relevance: float = Field(
        default=0.0, ge=-1.0, le=1.0,
        description="drop a hit whose marginal relevance is below this when it would be "
        "chosen; -1 reorders only (drops nothing but identical text)",
    )


def relevance(scores: Sequence[float]) -> np.ndarray:
    """Return the MMR relevance in [0, 1] of each position of a best-first list.

    :param scores: fused scores, in the list's order (higher is better).
    :returns: ``(n,)`` float64; position ``i`` gets the i-th largest score, scaled as
        ``(s - lo) / (s_max - lo)`` with ``lo = min(0, min score)``; 1.0 when all are equal.
    """
    import numpy as np

    ordered = np.sort(np.asarray(scores, dtype=np.float64))[::-1]
    if ordered.size == 0:
        return ordered
    lo = min(0.0, float(ordered[-1]))
    span = float(ordered[0]) - lo
    if span <= 0.0:
        return np.ones_like(ordered)
    return (ordered - lo) / span


def similarities(texts: Sequence[str], vectors: np.ndarray | None) -> np.ndarray:
    """Return the ``(n, n)`` similarity matrix MMR uses.

    :param texts: normalised texts of the hits.
    :param vectors: ``(n, dim)`` rows or ``None``; zero rows mean "no vector".
    :returns: cosine where both hits have a vector, else 1.0 for identical text and 0.0.
    """
    import numpy as np

    n = len(texts)
    codes = np.unique(np.asarray(texts, dtype=object), return_inverse=True)[1].reshape(n)
    sims = (codes[:, None] == codes[None, :]).astype(np.float64)
    if vectors is None or n == 0:
        return sims
    rows = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(rows, axis=1)
    present = norms > 0
    unit = rows / np.where(present, norms, 1.0)[:, None]
    both = present[:, None] & present[None, :]
    return np.where(both, unit @ unit.T, sims)


class MmrDedup:
    """Reorder hits by maximal marginal relevance; drop those below a threshold."""

    name = NAME

    def __init__(self, options: MmrOptions | None = None) -> None:
        self.options = options or MmrOptions()
        self.lam = self.options.relevance_weight
        self.threshold = self.options.min_marginal_relevance

    def _collapse_identical(
        self, hits: Sequence[FusedHit]
    ) -> tuple[list[int], list[str], dict[int, int]]:
        """Return (positions of first copies, all normalised texts, repeat -> first copy)."""
        texts = [normalise_text(h.chunk.text) for h in hits]
        first: dict[str, int] = {}
        repeats: dict[int, int] = {}
        for i, text in enumerate(texts):
            if text in first:
                repeats[i] = first[text]
            else:
                first[text] = i
        return list(first.values()), texts, repeats

    def dedup(
        self, hits: Sequence[FusedHit], vectors: np.ndarray | None
    ) -> tuple[list[FusedHit], list[Collapsed]]:
        """Return the hits in MMR order (ranks renumbered 1..n) and what was dropped.

        :param hits: fused hits, best first.
        :param vectors: ``(len(hits), dim)`` float32 rows for ``hits`` (zero rows for
            chunks without a vector), or ``None``.
        :returns: ``(kept, collapsed)``; reasons are ``"identical text"`` or e.g.
            ``"mmr -0.074 < 0 (relevance 0.310, similarity 0.970)"``.
        :raises ValueError: ``vectors`` does not have one row per hit.
        """
        if vectors is not None and (vectors.ndim != 2 or len(vectors) != len(hits)):
            raise ValueError(
                f"vectors: expected shape ({len(hits)}, dim), got {tuple(vectors.shape)}"
            )
        if not hits:
            return [], []
        candidates, texts, repeats = self._collapse_identical(hits)
        rel = relevance([h.score for h in hits])
        sims = similarities(texts, vectors)
        chosen, dropped = self._select(candidates, rel, sims)
        target = {i: i for i in chosen}
        collapsed: list[Collapsed] = []
        for i, mr, j in dropped:
            target[i] = j
            reason = (f"mmr {mr:.3f} < {self.threshold:g} "
                      f"(relevance {rel[i]:.3f}, similarity {sims[i, j]:.3f})")
            collapsed.append(Collapsed(hits[i].chunk.id, hits[j].chunk.id, reason))
        for i, first in repeats.items():
            kept_id = hits[target[first]].chunk.id
            collapsed.append(Collapsed(hits[i].chunk.id, kept_id, IDENTICAL_TEXT))
        kept = [replace(hits[i], rank=r) for r, i in enumerate(chosen, start=1)]
        return kept, collapsed

    def _select(
        self, candidates: list[int], rel: np.ndarray, sims: np.ndarray
    ) -> tuple[list[int], list[tuple[int, float, int]]]:
        """Run the greedy MMR selection over positions ``candidates``.

        :returns: (chosen positions in order, dropped ``(position, MR, most similar chosen)``).
        """
        import numpy as np

        lam = self.lam
        alive = np.zeros(len(rel), dtype=bool)
        alive[candidates] = True
        first = candidates[0]  # the best hit first: MR = λ·rel_1, nothing to repeat yet
        chosen = [first]
        alive[first] = False
        redundancy = sims[:, first].copy()
        while alive.any():
            mr = np.where(alive, lam * rel - (1.0 - lam) * redundancy, -np.inf)
            best = int(np.argmax(mr))  # ties: the better-ranked hit (argmax takes the first)
            if mr[best] < self.threshold:
                left = np.flatnonzero(alive)
                return chosen, [
                    (int(i), float(mr[i]), chosen[int(np.argmax(sims[i, chosen]))]) for i in left
                ]
            chosen.append(best)
            alive[best] = False
            np.maximum(redundancy, sims[:, best], out=redundancy)
        return chosen, []


def _factory(options: MmrOptions, context: ArmContext) -> MmrDedup:
    return MmrDedup(options)


def mmr_spec() -> ArmSpec:
    """Describe the ``mmr`` dedup (maximal marginal relevance, Carbonell & Goldstein 1998)."""
    return ArmSpec(
        kind="dedup",
        name=NAME,
        factory=_factory,
        options_model=MmrOptions,
        description="maximal marginal relevance (Carbonell & Goldstein 1998), λ=0.7: "
        "reorder for diversity, drop hits whose redundancy outweighs their relevance",
    )
