"""Whether a scope's embedding model would load (``octomem status`` asks), what a hit's
relevance is judged from with its embedder, and what ``status`` says of a scope that has
no store yet."""

from __future__ import annotations

from collections.abc import Sequence
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


#: How :func:`relevance_basis` begins: relevance from the words and the cosine, or words only.
FROM_MEANING, FROM_WORDS = "words and meaning", "words only"


def relevance_basis(scope: dict[str, Any]) -> str:
    """Return what a hit's relevance (its band, and abstention) is judged from in a scope
    whose ``status`` is ``scope`` (its ``arms``, ``embedder_model``,
    ``semantic_available`` and ``semantic_error``), as ``status`` says it (trial 19 K5).

    The shipped relevance weights use a hit's cosine only for the embedder they were
    fitted with (:meth:`~octomem.engine.relevance.RelevanceModel.fits`: the bundled
    MiniLM); with any other embedder (the model2vec plugin, a user's own) the keyword-only
    weights apply, and a right answer stored in other words than the question's comes back
    ``low`` or not at all. That was said only in a docstring.

    :returns: :data:`FROM_MEANING` and the model the weights were fitted for, or
        :data:`FROM_WORDS`, a colon and why (no semantic arm, semantic search unavailable,
        or weights fitted for another model).
    """
    embedder_model = scope.get("embedder_model")
    if not scope.get("semantic_available"):
        return (f"{FROM_WORDS}: "
                + ("semantic search is unavailable" if scope.get("semantic_error")
                   else "no semantic arm is configured"))
    from ..relevance import shipped_model

    model = shipped_model()
    if model.fits(embedder_model):
        return f"{FROM_MEANING} (the relevance weights are fitted to {model.embedder})"
    arm = (scope.get("arms") or {}).get("embedder")
    named = f"the embedder {arm}" if arm else embedder_model or "this embedder"
    return (f"{FROM_WORDS}: the relevance weights are fitted to the cosines of "
            f"{model.embedder} and {named} has none, so a hit is judged by the query's "
            "words it holds: an answer stored in other words comes back low or not at all")


def words_only_warning(answer: Any, scoped: Sequence[tuple[str, Pipeline]]) -> str | None:
    """Return the ``warnings`` entry of a recall answer whose relevance came from words only
    because of its embedder (:func:`relevance_basis`), when that matters: the answer
    abstained or all its hits are ``low``; else ``None``.

    An agent told that an all-``low`` answer means "probably not held" (docs/mcp.md)
    otherwise says so of a right answer stored in other words (trial 19 K5).

    :param answer: the recall answer (``hits``, ``abstained``, ``arms_ran``).
    :param scoped: the ``(scope, pipeline)`` pairs searched.
    """
    bands = [h.relevance.band for h in answer.hits if h.relevance is not None]
    if not answer.abstained and (not bands or set(bands) != {"low"}):
        return None
    from ..relevance import shipped_model

    model = shipped_model()
    for _, pipeline in scoped:
        semantic, embedder = pipeline.arms.semantic, pipeline.arms.embedder
        if semantic is None or embedder is None or semantic.name not in answer.arms_ran:
            continue
        if not model.fits(getattr(embedder, "model_id", None)):
            return (f"relevance from words only: the relevance weights are not fitted for "
                    f"the embedder {embedder.name} (octomem status says so), so an answer "
                    "stored in other words than the query's can come back low or not at "
                    "all; read the hits, or ask with other words")
    return None


def configured(scopes: ScopeSet, load_model: bool) -> dict[str, Any]:
    """Return what ``status`` shows for a scope without a store: the arms the settings
    name, the shared embedder's model id and whether semantic search would work, as
    configured (no store is created; the embedder is built alone, its model not loaded
    unless ``load_model`` and it has only a ``load()`` step).

    :returns: ``{"arms": kind -> name or None, "embedder_model", "semantic_available",
        "semantic_error", "relevance", "not_created"}`` (:func:`relevance_basis`,
        :data:`NOT_CREATED`).
    :raises OctomemError: the configured embedder cannot be built (bad options).
    """
    pipeline = scopes.loaded.settings.pipeline
    arms = {kind: getattr(pipeline, kind, None) or None for kind in ARM_KINDS}
    embedder = scopes.shared_arm("embedder") if arms["embedder"] else None
    why = embedder_error(embedder) if load_model and arms["semantic"] else None
    info = {"arms": arms, "embedder_model": getattr(embedder, "model_id", None),
            "semantic_available": bool(arms["semantic"] and embedder is not None and not why),
            "semantic_error": why}
    return {**info, "relevance": relevance_basis(info), "not_created": NOT_CREATED}
