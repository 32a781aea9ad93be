"""Embedder ``hashing``: deterministic signed feature hashing (no model, no network).

- :mod:`.embedder` — :class:`~.embedder.HashingEmbedder` and its registration.
"""

from __future__ import annotations

from .embedder import octomem_register_embedders

__all__ = ["octomem_register_embedders"]
