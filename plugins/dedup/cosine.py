"""Dedup ``cosine``: collapse repeated hits, identical text first, then near-identical vectors.

A hit is collapsed into the best-ranked already-kept hit whose text is identical after
case folding and whitespace normalisation; otherwise into the most similar kept hit when
their cosine similarity is >= ``threshold``. Hits are visited best first, so the kept
one is always the better-ranked copy, and every removal is reported with its reason.

Default threshold 0.99. Measured with the bundled all-MiniLM-L6-v2 int8: copies that
differ in punctuation or an article score 0.99; a paraphrase ("prefers dark mode" /
"likes a dark theme") 0.79; a prefixed copy ("Note: ...") 0.94. Statements differing in
one token of fact also score high (weekday 0.967, "Python 3.11"/"3.12" 0.987): in an
agent's memory such a pair is an update, not a repetition, so the default stays above
them. Lower ``threshold`` (e.g. 0.95) to collapse looser near-copies; every collapsed
hit is listed in the answer with its cosine.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from octomem.engine.arms import ArmContext, ArmSpec
from octomem.engine.types import Chunk, Collapsed, FusedHit, fused_hit

if TYPE_CHECKING:  # numpy is imported where arrays are made: building the arm stays light
    import numpy as np

IDENTICAL_TEXT = "identical text"
#: How far below ``threshold`` a cosine from the one product of all rows
#: (``rows @ rows.T``) must be for a pair to be passed over without the per-hit product
#: the decision is made with. Float32 dot products of 384-d unit vectors computed two
#: ways differ by ~1e-6; 1e-3 leaves room for any dimension, so every pair within reach
#: of the threshold is decided exactly as before.
PREFILTER_SLACK = 1e-3


class CosineDedupOptions(BaseModel, extra="forbid", defer_build=True, allow_inf_nan=False):
    """Options of the ``cosine`` dedup (settings table ``[arms.cosine]``)."""

    threshold: float = Field(
        default=0.99, gt=0.0, le=1.0,
        description="collapse a hit whose cosine to a better-ranked kept hit is >= this",
    )


@lru_cache(maxsize=8192)
def normalise_text(text: str) -> str:
    """Return ``text`` case-folded with runs of whitespace collapsed to one space, trimmed
    (cached: a store's chunks are deduplicated again on every recall they come back in)."""
    return " ".join(text.casefold().split())


def _unit_rows(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(rows scaled to unit norm, mask of rows that are non-zero)``."""
    import numpy as np

    rows = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1)
    present = norms > 0
    return rows / np.where(present, norms, 1.0)[:, None], present


class CosineDedup:
    """Collapse identical texts, then hits with cosine >= ``threshold`` to a kept hit."""

    name = "cosine"

    def __init__(self, options: CosineDedupOptions | None = None) -> None:
        self.options = options or CosineDedupOptions()
        self.threshold = self.options.threshold

    def prepare(self, chunks: Sequence[Chunk]) -> None:
        """Normalise the texts of chunks an answer may hold before :meth:`dedup` sees them
        (a search's read-ahead, while its query is embedded): :func:`normalise_text`'s
        cache keeps them, so the identical-text rule then only looks them up (~5 us per
        SciFact chunk at load 12, up to 30 per search)."""
        for chunk in chunks:
            normalise_text(chunk.text)

    def _most_similar(
        self, rows: np.ndarray, i: int, kept: np.ndarray, ids: list[int]
    ) -> tuple[int, float] | None:
        """Return ``(kept chunk id, cosine)`` of the kept row closest to ``rows[i]`` at or
        over the threshold, or ``None``.

        :param kept: positions in ``rows`` of the kept hits' vectors, best first.
        :param ids: their chunk ids, in the same order.
        """
        import numpy as np

        if not len(kept):
            return None
        sims = rows[kept] @ rows[i]
        best = int(np.argmax(sims))
        cosine = float(sims[best])
        return (ids[best], cosine) if cosine >= self.threshold else None

    def dedup(
        self, hits: Sequence[FusedHit], vectors: np.ndarray | None
    ) -> tuple[list[FusedHit], list[Collapsed]]:
        """Return the hits to keep (order kept, ranks renumbered 1..n) and what was collapsed.

        :param hits: fused hits, best first.
        :param vectors: ``(len(hits), dim)`` float32 rows for ``hits``; a zero row (chunk
            without a vector) takes part in the text rule only; ``None``: text rule only.
        :returns: ``(kept, collapsed)``; each :class:`Collapsed` names the kept chunk and a
            reason, ``"identical text"`` or ``"cosine 0.973 >= 0.95"``.
        :raises ValueError: ``vectors`` does not have one row per hit.
        """
        import numpy as np

        if vectors is not None and (vectors.ndim != 2 or len(vectors) != len(hits)):
            raise ValueError(
                f"vectors: expected shape ({len(hits)}, dim), got {tuple(vectors.shape)}"
            )
        rows, present = _unit_rows(vectors) if vectors is not None else (None, None)
        near = self._near(rows)
        kept: list[FusedHit] = []
        collapsed: list[Collapsed] = []
        seen_text: dict[str, int] = {}
        kept_rows = np.empty(len(hits), dtype=np.intp)  # positions of kept vectors
        kept_row_ids: list[int] = []
        for i, hit in enumerate(hits):
            key = normalise_text(hit.chunk.text)
            if key in seen_text:
                collapsed.append(Collapsed(hit.chunk.id, seen_text[key], IDENTICAL_TEXT))
                continue
            has_row = rows is not None and present is not None and bool(present[i])
            match = self._most_similar(rows, i, kept_rows[:len(kept_row_ids)], kept_row_ids) \
                if has_row and rows is not None and i in near else None
            if match is not None:
                reason = f"cosine {match[1]:.3f} >= {self.threshold:g}"
                collapsed.append(Collapsed(hit.chunk.id, match[0], reason))
                continue
            seen_text[key] = hit.chunk.id
            if has_row:
                kept_rows[len(kept_row_ids)] = i
                kept_row_ids.append(hit.chunk.id)
            kept.append(fused_hit(hit.chunk, hit.score, len(kept) + 1, hit.contributions,
                                  hit.relevance) if type(hit) is FusedHit
                        else replace(hit, rank=len(kept) + 1))
        return kept, collapsed

    def _near(self, rows: np.ndarray | None) -> set[int]:
        """Return the positions ``i`` with an earlier row ``j < i`` whose cosine from one
        product of all rows is within :data:`PREFILTER_SLACK` of the threshold: the only
        hits that can collapse into a kept one by cosine (the others skip the per-hit
        product, which alone decides)."""
        if rows is None or len(rows) < 2:
            return set()
        import numpy as np

        sims = rows @ rows.T
        later, _ = np.nonzero(np.tril(sims >= self.threshold - PREFILTER_SLACK, k=-1))
        return set(later.tolist())


def _factory(options: CosineDedupOptions, context: ArmContext) -> CosineDedup:
    return CosineDedup(options)


def cosine_spec() -> ArmSpec:
    """Describe the ``cosine`` dedup (identical text, then cosine >= threshold)."""
    return ArmSpec(
        kind="dedup",
        name="cosine",
        factory=_factory,
        options_model=CosineDedupOptions,
        description="collapse identical text, then cosine >= threshold (default 0.99) "
        "to a better-ranked hit",
    )
