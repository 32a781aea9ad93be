"""Whether a scope's embedding model would load (``octomem status`` asks), and what
``status`` says of a scope that has no store yet."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..arms import ARM_KINDS
from ..pipeline import Pipeline

if TYPE_CHECKING:
    from .scopes import ScopeSet

#: What ``status`` says of a scope without a store (``not_created``): why it shows no
#: counts, and that asking created nothing.
NOT_CREATED = ("no store yet: the first write into this scope (add, remember, ingest, "
               "import) creates it; a read never does")


def model_error(pipeline: Pipeline) -> str | None:
    """Return why the scope's embedder could not load its model, else ``None``.

    ``semantic_available`` used to say only that a semantic arm was configured, so a
    model that could not load still showed ``True`` until the first search. An embedder
    with an ``unavailable()`` method answers without loading (the shipped ``fastembed``
    checks packages and files: :mod:`octomem.plugins.fastembed.availability`), so
    ``octomem status`` imports neither onnxruntime nor numpy; one with only a ``load()``
    step (an outside plugin) is loaded to know.
    """
    if pipeline.arms.semantic is None:
        return None
    return embedder_error(pipeline.arms.embedder)


def embedder_error(embedder: Any) -> str | None:
    """Return why ``embedder`` could not load its model, else ``None`` (see
    :func:`model_error`; ``None`` for no embedder)."""
    if embedder is None:
        return None
    check = getattr(embedder, "unavailable", None)
    if callable(check):
        why = check()
        return None if why is None else str(why)
    load = getattr(embedder, "load", None)
    if not callable(load):
        return None
    try:
        load()
    except Exception as exc:  # any failure to load is the answer, reported as text
        return f"{type(exc).__name__}: {exc}"
    return None


def configured(scopes: ScopeSet, load_model: bool) -> dict[str, Any]:
    """Return what ``status`` shows for a scope without a store: the arms the settings
    name, the shared embedder's model id and whether semantic search would work, as
    configured (no store is created; the embedder is built alone, its model not loaded
    unless ``load_model`` and it has only a ``load()`` step).

    :returns: ``{"arms": kind -> name or None, "embedder_model", "semantic_available",
        "semantic_error", "not_created"}`` (:data:`NOT_CREATED`).
    :raises OctomemError: the configured embedder cannot be built (bad options).
    """
    pipeline = scopes.loaded.settings.pipeline
    arms = {kind: getattr(pipeline, kind, None) or None for kind in ARM_KINDS}
    embedder = scopes.shared_arm("embedder") if arms["embedder"] else None
    why = embedder_error(embedder) if load_model and arms["semantic"] else None
    return {"arms": arms, "embedder_model": getattr(embedder, "model_id", None),
            "semantic_available": bool(arms["semantic"] and embedder is not None and not why),
            "semantic_error": why, "not_created": NOT_CREATED}
