"""Result models the MCP tools add to the engine's (:mod:`octomem.engine.memory.results`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from ..engine.memory.times import iso_or_none as iso
from .loader import ModelState


class ScopeStatus(BaseModel):
    """What one scope holds."""

    model_config = ConfigDict(extra="allow")

    root: str = Field(description="the scope's directory")
    exists: bool = Field(description="false for a scope nothing was written to yet (it has "
                         "no store; a read never creates one)")
    documents: int = 0
    chunks: int = 0
    chunks_without_vector: int = Field(0, description="chunks found by their words only, so far")
    current: int = Field(0, description="documents that are current")
    superseded: int = Field(0, description="documents kept as history (superseded)")
    forgotten: int = Field(0, description="entries in the forget log (texts deleted)")
    size_bytes: int = Field(0, description="storage size on disk, bytes")
    semantic_error: str | None = None
    unreadable: str | None = Field(
        None, description="why this scope's store cannot be read (its file, what is wrong, "
        "what to do); recall searches the other scope meanwhile, and says so")
    not_created: str | None = Field(
        None, description="when exists is false: that the scope has no store yet and the "
        "first write into it creates it (a read never does)")
    newest_document_at: str | None = Field(
        None, description="when the newest document was stored (ISO-8601, UTC), as every "
        "time the tools return")


class StatusResult(BaseModel):
    """What the memory holds, how the pipeline is assembled, and the model's state."""

    model_config = ConfigDict(protected_namespaces=())

    project_root: str = Field(description="the project this server is bound to")
    scopes: dict[str, ScopeStatus] = Field(description="local and global")
    documents: int = Field(description="documents in both scopes")
    arms: dict[str, str | None] = Field(description="arm kind -> configured arm name (or null)")
    embedder_model: str | None = Field(None, description="identity of the embedding model")
    semantic_available: bool
    relevance: str | None = Field(
        None, description="what a hit's relevance, band and abstention are judged from: "
        "'words and meaning', or 'words only: why' (e.g. an embedder the relevance weights "
        "are not fitted for: then an answer stored in other words than the query's comes "
        "back low or not at all, and a low band does not mean the memory lacks it)")
    model_state: ModelState = Field(
        description="embedding model warm-up: starting, loading, ready, failed, not-configured"
    )
    model_error: str | None = Field(None, description="why the model could not be loaded")
    model_load_seconds: float | None = Field(None, description="how long the model took to load")


def status_result(
    status: dict[str, Any], state: ModelState, error: str | None, seconds: float | None,
) -> StatusResult:
    """Combine :meth:`Memory.status <octomem.engine.memory.facade.Memory.status>` with the loader's
    model state.

    While no scope has a store (a read creates none), the arms and model are those
    configured (each scope's status gives them) and semantic search is available when a
    semantic arm is configured and its model did not fail to load (as for a scope with a
    store, whose ``semantic_available`` does not wait for the model either).
    """
    shared = ("arms", "embedder_model", "semantic_available", "relevance")  # once, below
    scopes = {name: ScopeStatus(**{k: iso(v) if k.endswith("_at") and isinstance(v, int | float)
                                   else v for k, v in info.items() if k not in shared})
              for name, info in status["scopes"].items()}
    opened = [info for info in status["scopes"].values() if info.get("exists")]
    if opened:
        first, available = opened[0], all(i.get("semantic_available") for i in opened)
    else:
        first = next(iter(status["scopes"].values()), {})
        available = state != "failed" and bool(first.get("semantic_available"))
    return StatusResult(
        project_root=status["project_root"], scopes=scopes,
        documents=sum(s.documents for s in scopes.values()),
        arms=first.get("arms") or {}, embedder_model=first.get("embedder_model"),
        semantic_available=available, relevance=first.get("relevance"),
        model_state=state, model_error=error, model_load_seconds=seconds,
    )
