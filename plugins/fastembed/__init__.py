"""Embedder ``fastembed``: ONNX sentence embeddings (all-MiniLM-L6-v2 int8 by default), no torch.

- :mod:`.embedder` — :class:`~.embedder.FastembedEmbedder` and its registration;
- :mod:`.options` — its options (``[arms.fastembed]``) and the shipped model's constants;
- :mod:`.source` — where the model comes from (bundled, local folder, hub), from the options;
- :mod:`.availability` — whether the model would load, without loading it (``status``);
- :mod:`.requantize` — the once-per-machine per-channel int8 re-quantization (~2x faster);
- :mod:`.minilm_tokenizer` — the MiniLM tokenizer files, shipped as package data
  (Apache-2.0, see its NOTICE), so the default model loads with no hub access;
- :mod:`.wordpiece_count` — exact BERT WordPiece token counts without the tokenizer, and
  their cheap ceilings; :mod:`.bert_text` — which texts BERT's normalizer and
  pre-tokenizer leave plain, and which ``tokenizer.json`` is that kind;
  :mod:`.wordpiece_ceilings` — the ceilings' byte-level bounds;
  :mod:`.ceiling_arrays` — the ceilings of a whole ingest batch by numpy array operations
  (the GIL released);
- :mod:`.telemetry` — onnxruntime's telemetry turned off before onnxruntime is imported
  (importing this package does it).
"""

from __future__ import annotations

from .telemetry import disable_telemetry

disable_telemetry()  # before .embedder, or anything it imports, imports onnxruntime

from .embedder import octomem_register_embedders  # noqa: E402

__all__ = ["octomem_register_embedders"]
