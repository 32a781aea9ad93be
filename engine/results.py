"""JSON-ready result models shared by the CLI (``--json``) and the MCP tools."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field

from .types import Answer, Document, FusedHit


def iso(ts: float | None) -> str | None:
    """Format epoch seconds as an ISO-8601 UTC timestamp (``None`` stays ``None``)."""
    if ts is None:
        return None
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds")


class ArmContribution(BaseModel):
    """One arm's own view of a hit: its 1-based rank and raw score (higher is better)."""

    rank: int
    score: float


class RecallHit(BaseModel):
    """One hit of an answer."""

    id: str = Field(description="document id (use it to forget)")
    chunk_id: int
    rank: int = Field(description="1-based position in the answer")
    score: float = Field(description="fused score, higher is better (RRF: sum of 1/(k+rank))")
    text: str
    title: str | None = None
    uri: str | None = None
    kind: str
    tags: list[str] = Field(default_factory=list)
    created_at: str | None = Field(None, description="when it was recorded, ISO-8601 UTC")
    arms: dict[str, ArmContribution] | None = Field(
        None, description="each arm's rank and raw score (only with explain)"
    )


class CollapsedHit(BaseModel):
    """A hit that dedup removed, and why."""

    chunk_id: int
    kept_chunk_id: int
    reason: str


class RecallResult(BaseModel):
    """An answer and how it was made."""

    query: str
    hits: list[RecallHit]
    arms_ran: list[str]
    arms_unavailable: dict[str, str] = Field(description="arm -> why it did not run")
    semantic_available: bool
    collapsed: list[CollapsedHit] = Field(default_factory=list)
    unembedded_hits: list[int] = Field(
        default_factory=list, description="chunk ids found by words only (no vector yet)"
    )
    chunks_without_vector: int = Field(
        0, description="stored chunks with no vector of the configured embedder: found by "
        "keyword search only until `octomem reindex` embeds them",
    )
    timings_ms: dict[str, float] = Field(default_factory=dict)


class StoredItem(BaseModel):
    """A stored document or memory statement."""

    id: str
    text: str
    kind: str
    tags: list[str] = Field(default_factory=list)
    title: str | None = None
    uri: str | None = None
    created_at: str | None = None


def hit_model(hit: FusedHit, explain: bool) -> RecallHit:
    """Convert a fused hit; include per-arm ranks and scores when ``explain``."""
    c = hit.chunk
    arms = (
        {arm: ArmContribution(rank=h.rank, score=h.score) for arm, h in hit.contributions.items()}
        if explain
        else None
    )
    return RecallHit(
        id=c.document_id, chunk_id=c.id, rank=hit.rank, score=hit.score, text=c.text,
        title=c.title, uri=c.uri, kind=c.kind, tags=list(c.tags), created_at=iso(c.created_at),
        arms=arms,
    )


def recall_result(query: str, answer: Answer, explain: bool = False) -> RecallResult:
    """Convert an :class:`~octomem.engine.types.Answer` to its JSON-ready model."""
    return RecallResult(
        query=query,
        hits=[hit_model(h, explain) for h in answer.hits],
        arms_ran=answer.arms_ran,
        arms_unavailable=answer.arms_unavailable,
        semantic_available=answer.semantic_available,
        collapsed=[CollapsedHit(chunk_id=c.chunk_id, kept_chunk_id=c.kept_chunk_id, reason=c.reason)
                   for c in answer.collapsed],
        unembedded_hits=answer.unembedded_hits,
        chunks_without_vector=answer.chunks_without_vector,
        timings_ms={k: round(v, 3) for k, v in answer.timings_ms.items()},
    )


def stored_item(doc: Document) -> StoredItem:
    """Convert a stored document to its JSON-ready model."""
    return StoredItem(
        id=doc.id, text=doc.text, kind=doc.kind, tags=list(doc.tags), title=doc.title,
        uri=doc.uri, created_at=iso(doc.created_at),
    )


def as_json(model: BaseModel) -> dict[str, Any]:
    """Dump a result model as a JSON-compatible dict, leaving out ``None`` fields."""
    return model.model_dump(mode="json", exclude_none=True)
