"""Whether a scope's embedding model would load (``octomem status`` asks)."""

from __future__ import annotations

from typing import Any

from ..pipeline import Pipeline


def model_error(pipeline: Pipeline) -> str | None:
    """Return why the scope's embedder could not load its model, else ``None``.

    ``semantic_available`` used to say only that a semantic arm was configured, so a
    model that could not load still showed ``True`` until the first search. An embedder
    with an ``unavailable()`` method answers without loading (the shipped ``fastembed``
    checks packages and files: :mod:`octomem.plugins.fastembed.availability`), so
    ``octomem status`` imports neither onnxruntime nor numpy; one with only a ``load()``
    step (an outside plugin) is loaded to know.
    """
    embedder: Any = pipeline.arms.embedder
    if pipeline.arms.semantic is None or embedder is None:
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
