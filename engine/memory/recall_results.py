"""JSON-ready models of a recall answer (its hits, what dedup collapsed, why it is
empty), shared by the MCP ``recall`` tool, ``--json`` output and the browser view; the
other operations' models: :mod:`.results`."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..relevance import Relevance
from .limits import preview
from .models import ArmContribution
from .recall import RecallAnswer, ScopedHit
from .times import iso_or_none as iso
from .turn_results import (
    BudgetResult,
    ContextItem,
    TurnInfo,
    budget_result,
    context_items,
    turn_info,
)


class MemoryHit(BaseModel):
    """One hit of a recall answer."""

    id: str = Field(description="document id (to forget, supersede or read "
                    "octomem://item/{id}, written as it is, / included)")
    scope: str = Field(description="local (this project) or global (every project)")
    chunk_id: int = Field(description="chunk id within its scope")
    rank: int = Field(description="1-based position in the answer")
    score: float = Field(description="fused score x (1 + recency bonus), higher is better")
    relevance: float | None = Field(
        None, description="probability (0..1) that this hit answers the query, comparable "
        "across queries (unlike score)")
    band: str | None = Field(
        None, description="high (>= 0.5: likely answers), medium (>= 0.07 and its floor: "
        "may answer) or low (unlikely to; an answer whose hits are all low is a weak match)")
    text: str
    title: str | None = None
    uri: str | None = None
    kind: str
    tags: list[str] = Field(default_factory=list)
    created_at: str | None = Field(None, description="when it was recorded, ISO-8601 UTC")
    event_time: str | None = Field(None, description="when what it says happened")
    current: bool = Field(description="false for a superseded statement or an old revision")
    valid_to: str | None = Field(None, description="when it stopped being current")
    fused_score: float | None = Field(None, description="RRF score before the recency bonus "
                                      "(only with explain)")
    recency_bonus: float | None = Field(None, description="bonus as a fraction of the fused "
                                        "score, at most 0.1 (only with explain)")
    arms: dict[str, ArmContribution] | None = Field(
        None, description="each arm's rank and raw score, scopes merged (only with explain)")
    turn: TurnInfo | None = Field(None, description="for a conversation turn: where it sits")
    context: list[ContextItem] | None = Field(
        None, description="the turns around it in its conversation (recall's context), in order")
    relevance_from: dict[str, float | None] | None = Field(
        None, description="what the relevance was computed from: the hit's cosine to the "
        "query and the share of the query's content words it holds; for a document's hit "
        "also cos_lift (its cosine minus the mean cosine of the query's semantic run) and "
        "kw_z (its keyword score z-scored within the keyword run); for a turn's or "
        "statement's hit, unheard when some of the query's content words are in nothing the "
        "memory holds (each lowers the relevance), assistant_aside 1 for an assistant's "
        "turn asked about the user's own life (lowers it), reach when the query was "
        "compared with fewer than 100 chunks, a small store (raises it), and keyword_strength, "
        "the best keyword match's BM25 score over ln of the rows the keyword index holds "
        "(below the centre of engine/relevance.json it lowers the relevance, above it "
        "raises it) (only with explain)")


def memory_hit(hit: ScopedHit, explain: bool) -> MemoryHit:
    """Convert one recall hit; with ``explain``, the fused score, bonus and arms."""
    c, rel = hit.chunk, hit.relevance
    arms = ({a: ArmContribution(rank=h.rank, score=h.score) for a, h in hit.contributions.items()}
            if explain else None)
    return MemoryHit(
        id=c.document_id, scope=hit.scope, chunk_id=c.id, rank=hit.rank, score=hit.score,
        text=c.text, title=c.title, uri=c.uri, kind=c.kind, tags=list(c.tags),
        created_at=iso(c.created_at),
        event_time=iso(c.valid_from) if c.valid_from != c.created_at else None,
        current=c.valid_to is None, valid_to=iso(c.valid_to),
        fused_score=hit.fused_score if explain else None,
        recency_bonus=round(hit.recency, 6) if explain else None, arms=arms,
        turn=turn_info(c),
        relevance=round(rel.probability, 4) if rel else None, band=rel.band if rel else None,
        relevance_from=_relevance_from(rel) if explain and rel else None,
    )


def _relevance_from(rel: Relevance) -> dict[str, float | None]:
    """The inputs of ``rel`` (a document's hit adds ``cos_lift`` and ``kw_z``; ``unheard``
    when the query has words the memory never mentions; ``assistant_aside`` for an
    assistant's turn asked about the user's own life; ``reach`` when it was asked of a
    small store; ``keyword_strength`` when that term entered it; ``reply_own_relevance``
    for a reply that took its question's relevance)."""
    out: dict[str, float | None] = {"cos": None if rel.cos is None else round(rel.cos, 4),
                                    "coverage": round(rel.coverage, 4)}
    if rel.unheard:
        out["unheard"] = rel.unheard
    if rel.aside:
        out["assistant_aside"] = 1.0
    if rel.reach is not None:
        out["reach"] = rel.reach
    if rel.strength is not None:
        out["keyword_strength"] = round(rel.strength, 4)
    if rel.reply_own is not None:
        out["reply_own_relevance"] = round(rel.reply_own, 4)
    if rel.kw_z is not None:
        out["cos_lift"] = None if rel.cos_lift is None else round(rel.cos_lift, 4)
        out["kw_z"] = round(rel.kw_z, 4)
    return out


class MemoryCollapsed(BaseModel):
    """A hit that dedup removed from the answer, and why."""

    id: str
    scope: str
    kept_id: str
    kept_scope: str
    reason: str = Field(description='"identical text" or "cosine 0.991 >= 0.99"')


class MemoryRecallResult(BaseModel):
    """A recall across scopes and how it was made."""

    query: str
    scopes: list[str] = Field(description="the scopes searched (a missing local scope is skipped)")
    hits: list[MemoryHit]
    arms_ran: list[str]
    arms_unavailable: dict[str, str] = Field(description="arm (scope) -> why it did not run")
    scopes_unavailable: dict[str, str] = Field(
        default_factory=dict, description="scope -> why it was not searched: its store "
        "cannot be read (the file is named; it was left as it is); the hits come from the "
        "other scope")
    semantic_available: bool = Field(description=(
        "whether the semantic arm took part; when nothing was searched (nothing stored, or "
        "a filter no stored document passes: see nothing_to_rank), whether it would, as "
        "`status` says"))
    collapsed: list[MemoryCollapsed] = Field(default_factory=list)
    unembedded_hits: list[str] = Field(
        default_factory=list, description="ids of hits found by words only (no vector yet)")
    chunks_without_vector: int = Field(0, description="stored chunks found by words only")
    timings_ms: dict[str, float] = Field(
        default_factory=dict, description="milliseconds by step: load_model (loading the "
        "embedding model, only when this answer loaded it), embed_query (the query's own "
        "embedding), each arm's search by scope, total")
    budget: BudgetResult | None = Field(
        None, description="with max_tokens: tokens used and the hits cut to fit")
    warnings: list[str] = Field(
        default_factory=list, description="hits left out because a stored value cannot be "
        "shown (`octomem verify --repair` fixes them); and, when the answer abstained or "
        "all its hits are low, that relevance came from words only because the embedder "
        "has no fitted relevance weights (then low does not mean the memory lacks it)")
    abstained: str | None = Field(
        None, description="why there are no hits although something was searched: nothing "
        "stored reached retrieval.relevance_floor (the memory holds no answer)")
    nothing_to_rank: str | None = Field(
        None, description="why there are no hits although the memory did not abstain: the "
        "scopes searched hold nothing, or nothing stored passes the filters (a kind or tag "
        "no document has, no current statement from the since/until window, nothing valid "
        "yet at as_of), named")
    weak_left_out: int = Field(
        0, description="hits left out as noise: relevance below retrieval.relevance_floor "
        "and below retrieval.relative_floor times the best hit's (or below "
        "retrieval.weak_answer_floor when the best hit is low)")
    best_rejected: MemoryHit | None = Field(
        None, description="when abstained (only with explain): the best match, not "
        "returned because its relevance is below its floor (retrieval.relevance_floor, or "
        "retrieval.document_relevance_floor for a document's hit); its rank is "
        "its place before abstaining, its arms and relevance_from say why it scored low")


def recall_result(query: str, answer: RecallAnswer, explain: bool = False) -> MemoryRecallResult:
    """Convert a :class:`~octomem.engine.memory.recall.RecallAnswer` (a
    :class:`~.context.ShapedAnswer`'s context turns and budget included)."""
    by_key = {(h.scope, h.chunk.id): h.chunk.document_id for h in answer.hits}
    hits = [memory_hit(h, explain) for h in answer.hits]
    around = getattr(answer, "context", {})
    for hit, model in zip(answer.hits, hits, strict=True):
        if (hit.scope, hit.chunk.id) in around:
            model.context = context_items(around[(hit.scope, hit.chunk.id)])
    return MemoryRecallResult(
        query=preview(query), scopes=answer.scopes, hits=hits,
        budget=budget_result(getattr(answer, "budget", None)),
        arms_ran=answer.arms_ran, arms_unavailable=answer.arms_unavailable,
        scopes_unavailable=getattr(answer, "scopes_unavailable", {}),
        semantic_available=answer.semantic_available,
        collapsed=[MemoryCollapsed(id=c.chunk.document_id, scope=c.scope,
                                   kept_id=c.kept_chunk.document_id, kept_scope=c.kept_scope,
                                   reason=c.reason) for c in answer.collapsed],
        unembedded_hits=[by_key[k] for k in answer.unembedded_hits if k in by_key],
        chunks_without_vector=answer.chunks_without_vector,
        timings_ms={k: round(v, 3) for k, v in answer.timings_ms.items()},
        warnings=answer.warnings,
        abstained=answer.abstained,
        nothing_to_rank=answer.nothing_to_rank,
        weak_left_out=answer.weak_left_out,
        best_rejected=(memory_hit(answer.best_rejected, True)
                       if explain and answer.best_rejected is not None else None),
    )
