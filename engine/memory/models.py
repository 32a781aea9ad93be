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
    """Dump a result model as a JSON-compatible dict, every field present (``None`` as
    ``null``): the shape the MCP tool answering the same (``recall``, ``remember``,
    ``forget``) gives, so a script reads ``hit["title"]`` from either (trial 16 F7: the CLI
    left out ``title`` and ``event_time`` of an untitled turn, and ``h["title"]`` raised
    ``KeyError``)."""
    return model.model_dump(mode="json")
