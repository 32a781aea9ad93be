"""JSON-ready parts of a recall answer about conversations: a hit's turn, its context
turns, and what a token budget cut (:mod:`.context`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from ..turns import CONVERSATION, POSITION, ROLE, SESSION, SPEAKER, TIME
from ..types import Chunk
from .context import Budget, ContextTurn, turn_place


class TurnInfo(BaseModel):
    """Where a conversation turn sits."""

    conversation: str
    session: str | None = None
    position: int = Field(description="0-based index of the turn in its conversation")
    speaker: str | None = None
    role: str | None = Field(None, description="user or assistant (user-assistant chats)")
    time: str | None = Field(None, description="when it was said, ISO-8601")


def turn_info(chunk: Chunk) -> TurnInfo | None:
    """Return a turn's place (``None`` for a chunk that is not a turn)."""
    if turn_place(chunk) is None:
        return None
    meta: dict[str, Any] = dict(chunk.metadata)
    return TurnInfo(
        conversation=str(meta[CONVERSATION]), position=meta[POSITION],
        session=None if meta.get(SESSION) is None else str(meta[SESSION]),
        speaker=meta.get(SPEAKER), role=meta.get(ROLE), time=meta.get(TIME),
    )


class ContextItem(BaseModel):
    """A turn next to a hit in its conversation, for reading the hit in place."""

    id: str = Field(description="the turn's document id")
    offset: int = Field(description="its position minus the hit's: -1 is the turn just before")
    text: str
    title: str | None = None
    turn: TurnInfo | None = None


def context_items(turns: list[ContextTurn]) -> list[ContextItem]:
    """Convert a hit's context turns."""
    return [ContextItem(id=t.chunk.document_id, offset=t.offset, text=t.chunk.text,
                        title=t.chunk.title, turn=turn_info(t.chunk)) for t in turns]


class CutItem(BaseModel):
    """A hit left out to keep the answer within ``max_tokens``."""

    id: str
    scope: str
    rank: int = Field(description="its rank before the cut")
    tokens: int = Field(description="its estimated size, context included")


class BudgetResult(BaseModel):
    """How the answer was packed into ``max_tokens``, or cut to the MCP answer's byte
    bound."""

    max_tokens: int | None = Field(description="the max_tokens asked for; null when only "
                                   "the byte bound (max_bytes) cut the answer")
    tokens: int = Field(description="estimated tokens of the hits returned (ceil(chars / 4) "
                        "of titles, texts and context turns)")
    cut: list[CutItem] = Field(default_factory=list, description="hits left out, best first")
    truncated: str | None = Field(None, description="id of the first hit, when its text was "
                                  "shortened to fit the budget on its own")
    context_dropped: list[str] = Field(default_factory=list, description="ids of hits "
                                       "returned without their context turns, to fit")
    max_bytes: int | None = Field(None, description="set when the answer was cut to stay "
                                  "within this many bytes, what an MCP client takes in one "
                                  "message (the hits cut for it are in cut too)")


def budget_result(budget: Budget | None) -> BudgetResult | None:
    """Convert what packing did (``None`` without a budget)."""
    if budget is None:
        return None
    return BudgetResult(
        max_tokens=budget.max_tokens, tokens=budget.used,
        cut=[CutItem(id=c.chunk.document_id, scope=c.scope, rank=c.rank, tokens=c.tokens)
             for c in budget.cut],
        truncated=budget.truncated, context_dropped=budget.context_dropped,
    )
