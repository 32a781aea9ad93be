"""Reranker ``cross-encoder``: re-score the fused top-N with an ONNX cross-encoder.

- :mod:`.reranker` — :class:`~.reranker.CrossEncoderReranker` and its registration
  (off by default: no PyPI package ships cross-encoder weights).
"""

from __future__ import annotations

from .reranker import octomem_register_rerankers

__all__ = ["octomem_register_rerankers"]
