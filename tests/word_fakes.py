"""A fake embedder of single words, for the `conversation` reranker's word columns
(`expansion`, soft coverage): known unit vectors instead of a model's."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


class Words:
    """An embedder of single words onto fixed unit vectors (``table``: word -> a 3-d
    vector, normalised here; any other word -> (0, 0, 1)); ``embedded`` lists every word
    it was asked for, in order."""

    dim = 3
    model_id = "fake"

    def __init__(self, table: dict[str, Sequence[float]]) -> None:
        self.table = table
        self.embedded: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Return ``texts``' vectors: float32, shape (len(texts), 3), unit rows."""
        self.embedded.extend(texts)
        rows = np.array([self.table.get(t, (0.0, 0.0, 1.0)) for t in texts], dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)
