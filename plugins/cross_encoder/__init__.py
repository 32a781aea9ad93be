"""Reranker ``cross-encoder``: re-score the fused top-N with an ONNX cross-encoder.

- :mod:`.reranker` — :class:`~.reranker.CrossEncoderReranker` and its registration
  (off by default: no PyPI package ships cross-encoder weights).

onnxruntime's telemetry is turned off before it is imported (see
:mod:`octomem.plugins.fastembed.telemetry`).
"""

from __future__ import annotations

from octomem.plugins.fastembed.telemetry import disable_telemetry

disable_telemetry()

from .reranker import octomem_register_rerankers  # noqa: E402

__all__ = ["octomem_register_rerankers"]
