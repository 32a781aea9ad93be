"""Whether a scope's embedding model really loads (``octomem status`` asks)."""

from __future__ import annotations

from typing import Any

from ..pipeline import Pipeline


def model_error(pipeline: Pipeline) -> str | None:
    """Load the embedder if it has a ``load()`` step; return why it failed, else ``None``.

    ``semantic_available`` used to say only that a semantic arm was configured, so a
    model that could not load still showed ``True`` until the first search.
    """
    embedder: Any = pipeline.arms.embedder
    load = getattr(embedder, "load", None)
    if pipeline.arms.semantic is None or embedder is None or not callable(load):
        return None
    try:
        load()
    except Exception as exc:  # any failure to load is the answer, reported as text
        return f"{type(exc).__name__}: {exc}"
    return None
