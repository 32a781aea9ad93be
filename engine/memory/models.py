"""JSON-ready result models shared by the CLI (``--json``) and the MCP tools."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class ArmContribution(BaseModel):
    """One arm's own view of a hit: its 1-based rank and raw score (higher is better)."""

    rank: int
    score: float


class StoredItem(BaseModel):
    """A stored document or memory statement."""

    id: str
    text: str
    kind: str
    tags: list[str] = Field(default_factory=list)
    title: str | None = None
    uri: str | None = None
    created_at: str | None = None


def as_json(model: BaseModel) -> dict[str, Any]:
    """Dump a result model as a JSON-compatible dict, leaving out ``None`` fields."""
    return model.model_dump(mode="json", exclude_none=True)
