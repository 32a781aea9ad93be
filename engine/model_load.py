"""The embedding model's load, timed apart from the query's embedding.

An embedder may load its model lazily, on the first text it embeds (fastembed: 1-4 s of
onnxruntime session and graph set-up on 2 cores, most of a CLI search's wall time). An
answer's ``timings_ms`` then reports that load as ``load_model`` and the query's own
embedding as ``embed_query``, so neither is mistaken for the other.
"""

from __future__ import annotations

import time
from typing import Any


def load_model(embedder: Any) -> float:
    """Load ``embedder``'s model if it is not loaded yet (an embedder with a ``load()``
    method and a ``loaded`` flag, as fastembed's; others load nothing here); return the
    milliseconds it took, 0.0 when nothing was loaded.

    :raises EmbedderUnavailableError: the model cannot be loaded.
    """
    load = getattr(embedder, "load", None)
    if not callable(load) or getattr(embedder, "loaded", True):
        return 0.0
    start = time.perf_counter()
    load()
    return (time.perf_counter() - start) * 1e3
