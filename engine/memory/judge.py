"""Every recall hit's relevance, and abstention when no hit reaches its floor.

A hit's relevance comes from :mod:`octomem.engine.relevance`: turns and statements from
their cosine and coverage, a document's hit (:data:`~octomem.engine.relevance.DOCUMENT_KINDS`)
also from how far it stands above the query's runs over its scope's store
(:class:`~octomem.engine.relevance.RunStats`, taken from the runs this recall made, so no
second search). Each kind has its floor: ``retrieval.relevance_floor`` for turns and
statements, ``retrieval.document_relevance_floor`` for documents. An answer is empty,
with the reason, when no hit reaches its own floor; otherwise the hits below both their
floor and ``retrieval.relative_floor`` times the best hit's relevance are left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..pipeline import Pipeline, embedding_text
from ..relevance import (
    DOCUMENT_KINDS,
    RunStats,
    abstain_reason,
    relevance_of,
    run_stats,
    shipped_model,
)
from .scoped_fusion import Key, ScopedRuns

if TYPE_CHECKING:
    from ..settings import RetrievalSettings
    from .recall import RecallAnswer, ScopedHit

#: The setting naming each kind's floor (``abstained`` names the one that was missed).
TURN_FLOOR, DOCUMENT_FLOOR = "retrieval.relevance_floor", "retrieval.document_relevance_floor"


def scope_stats(runs: ScopedRuns, pipelines: Mapping[str, Pipeline]) -> dict[str, RunStats]:
    """Return each scope's :class:`RunStats`: its semantic run's cosines and its keyword
    run's scores, as this recall's arms returned them (``candidate_k`` each)."""
    out = {}
    for scope, pipeline in pipelines.items():
        arms = pipeline.arms
        sem = arms.semantic.name if arms.semantic is not None else None
        kw = arms.keyword.name if arms.keyword is not None else None
        cosines = [e[3].score for e in runs.by_arm.get(sem or "", ()) if e[2] == scope]
        scores = [e[3].score for e in runs.by_arm.get(kw or "", ()) if e[2] == scope]
        out[scope] = run_stats(cosines, scores)
    return out


def is_document(hit: Any) -> bool:
    """Return whether ``hit`` (anything with a ``chunk``) is scored as a document's hit:
    its kind is a document kind and the shipped weights have document weights."""
    return hit.chunk.kind in DOCUMENT_KINDS and shipped_model().document is not None


def judged(hits: list[ScopedHit], text: str, cos: dict[Key, float],
           retrieval: RetrievalSettings, embedder: str | None, answer: RecallAnswer,
           stats: Mapping[str, RunStats], pipelines: Mapping[str, Pipeline]
           ) -> list[ScopedHit]:
    """Give every hit its relevance; return none when no hit reaches its kind's floor
    (``answer.abstained`` says why, ``answer.best_rejected`` is the best one), else leave
    out the hits below both their floor and ``retrieval.relative_floor`` times the best
    (counted in ``answer.weak_left_out``)."""
    floors = []
    for hit in hits:
        doc = is_document(hit)
        floor = retrieval.document_relevance_floor if doc else retrieval.relevance_floor
        keyword = pipelines[hit.scope].arms.keyword
        kw_hit = hit.contributions.get(keyword.name) if keyword is not None else None
        hit.relevance = relevance_of(
            text, embedding_text(hit.chunk), cos.get((hit.scope, hit.chunk.id)), floor,
            embedder=embedder, stats=stats.get(hit.scope) if doc else None,
            keyword_score=None if kw_hit is None else kw_hit.score)
        floors.append((floor, DOCUMENT_FLOOR if doc else TURN_FLOOR))
    probability = [h.relevance.probability if h.relevance else 0.0 for h in hits]
    best = max(probability, default=0.0)
    if hits and not any(p >= f for p, (f, _) in zip(probability, floors, strict=True)):
        at = max(range(len(hits)), key=probability.__getitem__)
        answer.abstained = abstain_reason(best, *floors[at])
        hits[at].rank = at + 1
        answer.best_rejected = hits[at]
        return []
    kept = [h for h, p, (f, _) in zip(hits, probability, floors, strict=True)
            if h.relevance is None or p >= min(f, retrieval.relative_floor * best)]
    answer.weak_left_out = len(hits) - len(kept)
    return kept
