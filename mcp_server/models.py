"""Result models the MCP tools add to the engine's (:mod:`octomem.engine.results`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from octomem.engine.results import StoredItem

from .loader import ModelState


class RememberedItem(StoredItem):
    """A memory just stored, and whether it can already be found by meaning."""

    embedded: bool = Field(
        description="its vector was written; when false it is found by its words only"
    )
    semantic_error: str | None = Field(None, description="why no vector was written")


class StatusResult(BaseModel):
    """What the memory holds, how the pipeline is assembled, and the model's state."""

    model_config = ConfigDict(extra="allow", protected_namespaces=())

    root: str = Field(description="the scope directory the data lives in")
    documents: int
    chunks: int
    chunks_without_vector: int = Field(description="chunks found by their words only, so far")
    size_bytes: int = Field(description="storage size on disk, bytes")
    arms: dict[str, str | None] = Field(description="arm kind -> configured arm name (or null)")
    embedder_model: str | None = Field(None, description="identity of the embedding model")
    semantic_available: bool
    semantic_error: str | None = None
    model_state: ModelState = Field(
        description="embedding model warm-up: starting, loading, ready, failed, not-configured"
    )
    model_error: str | None = Field(None, description="why the model could not be loaded")
    model_load_seconds: float | None = Field(None, description="how long the model took to load")


def status_result(
    status: dict[str, Any], state: ModelState, error: str | None, seconds: float | None
) -> StatusResult:
    """Combine the pipeline's status dict with the loader's model state."""
    return StatusResult(
        **status, model_state=state, model_error=error, model_load_seconds=seconds
    )
