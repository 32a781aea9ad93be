"""Reranker ``cross-encoder``: re-score (query, passage) pairs with an ONNX cross-encoder.

A cross-encoder reads the query and the passage together and outputs one relevance logit
(Nogueira & Cho, "Passage Re-ranking with BERT", 2019); the default hub model is
``Xenova/ms-marco-MiniLM-L-6-v2`` (MS MARCO cross-encoder, Apache-2.0), run by fastembed's
``TextCrossEncoder``. No PyPI package ships cross-encoder weights, so this arm is off by
default: name it in ``pipeline.reranker`` and give either a hub name (where the hub is
reachable) or ``model_path``, a local folder holding an ONNX file plus ``tokenizer.json``
and ``tokenizer_config.json`` (loaded with no network).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, model_validator

from octomem.engine.arms import ArmContext, ArmSpec
from octomem.engine.digests import file_sha256
from octomem.engine.errors import EmbedderUnavailableError
from octomem.engine.hookspecs import hookimpl
from octomem.plugins.fastembed.loading import (
    custom_model_name,
    find_onnx_file,
    load_from_hub,
    sort_by_length,
)

if TYPE_CHECKING:  # numpy is imported where arrays are made: registering the plugin stays light
    import numpy as np

DEFAULT_MODEL = "Xenova/ms-marco-MiniLM-L-6-v2"
_REGISTER_LOCK = threading.Lock()


class RerankerUnavailableError(EmbedderUnavailableError):
    """The reranker's model cannot be loaded (missing files, no hub access, bad model)."""


class CrossEncoderOptions(BaseModel, extra="forbid", defer_build=True, allow_inf_nan=False):
    """Options of the ``cross-encoder`` reranker (settings table ``[arms.cross-encoder]``)."""

    model: str = Field(default=DEFAULT_MODEL, description="fastembed / hub cross-encoder name")
    model_path: Path | None = Field(
        default=None, description="local folder with an ONNX cross-encoder and its tokenizer files"
    )
    model_file: str | None = Field(
        default=None, description="ONNX file inside model_path or the hub repo (default: found)"
    )
    threads: int | None = Field(
        default=None, ge=1, description="onnxruntime threads (default: all cores)"
    )
    batch_size: int = Field(default=32, ge=1, le=4096, description="pairs per onnxruntime call")
    cache_dir: Path | None = Field(
        default=None, description="fastembed download cache (hub models)"
    )

    @model_validator(mode="after")
    def _one_source(self) -> CrossEncoderOptions:
        if self.model_path is not None and self.model != DEFAULT_MODEL:
            raise ValueError("give either model or model_path, not both")
        return self


def _known(name: str) -> dict[str, Any] | None:
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    for description in TextCrossEncoder.list_supported_models():
        if description["model"].lower() == name.lower():
            return description
    return None


def _register(name: str, hf_repo: str, model_file: str) -> None:
    """Register a custom cross-encoder with fastembed once per process."""
    from fastembed.common.model_description import ModelSource
    from fastembed.rerank.cross_encoder import TextCrossEncoder

    with _REGISTER_LOCK:
        if _known(name) is None:
            TextCrossEncoder.add_custom_model(
                model=name, sources=ModelSource(hf=hf_repo), model_file=model_file
            )


class CrossEncoderReranker:
    """Cross-encoder relevance scores for (query, passage) pairs; loads lazily, thread-safe."""

    name = "cross-encoder"

    def __init__(self, options: CrossEncoderOptions | None = None) -> None:
        self.options = options or CrossEncoderOptions()
        self.threads = self.options.threads or os.cpu_count() or 1
        self._folder = (
            self.options.model_path.expanduser().resolve()
            if self.options.model_path is not None else None
        )
        self._model: Any = None  # fastembed TextCrossEncoder once loaded
        self._error: RerankerUnavailableError | None = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        """Whether the ONNX session exists (construction never creates it)."""
        return self._model is not None

    @property
    def model_id(self) -> str:
        """Identity of the scoring model (for ``explain`` and benchmark reports)."""
        if self._folder is None:
            return f"fastembed:{self.options.model}"
        try:
            digest = file_sha256(find_onnx_file(self._folder, self.options.model_file))[:12]
        except (OSError, EmbedderUnavailableError):
            digest = "missing"
        return f"fastembed:local:{self._folder.name}:sha256-{digest}"

    def _describe(self) -> str:
        return f"cross-encoder reranker ({self._folder or self.options.model})"

    def load(self) -> None:
        """Load the ONNX model now (otherwise the first :meth:`rerank` call does).

        :raises RerankerUnavailableError: files missing, hub unreachable or offline, or a
            broken model; the failure is remembered, build a new reranker to retry.
        """
        if self._model is not None:
            return
        with self._lock:
            if self._model is not None:
                return
            if self._error is not None:
                raise self._error
            try:
                self._model = self._construct()
            except Exception as exc:  # fastembed/onnxruntime raise ValueError, OSError, ...
                self._error = RerankerUnavailableError(
                    str(exc) if isinstance(exc, EmbedderUnavailableError)
                    else f"{self._describe()}: cannot load: {type(exc).__name__}: {exc}"
                )
                raise self._error from exc

    def _construct(self) -> Any:
        from fastembed.rerank.cross_encoder import TextCrossEncoder

        kwargs: dict[str, Any] = {"threads": self.threads}
        if self.options.cache_dir is not None:
            kwargs["cache_dir"] = str(self.options.cache_dir)
        if self._folder is not None:
            onnx_path = find_onnx_file(self._folder, self.options.model_file)
            name = custom_model_name("rerank-local", str(onnx_path))
            _register(name, name, str(onnx_path))
            return TextCrossEncoder(name, specific_model_path=str(self._folder), **kwargs)
        known = _known(self.options.model)
        if known is not None and self.options.model_file is None:
            name, repo = known["model"], (known.get("sources") or {}).get("hf")
        else:
            model_file = self.options.model_file or "onnx/model.onnx"
            name = custom_model_name("rerank-hub", self.options.model, model_file)
            repo = self.options.model
            _register(name, repo, model_file)
        return load_from_hub(
            lambda local: TextCrossEncoder(name, local_files_only=local, **kwargs),
            repo, self._describe(),
        )

    def rerank(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """Score each passage against ``query``.

        :param texts: passages; pairs longer than the model's limit (512 tokens for
            MiniLM cross-encoders) are truncated by its tokenizer.
        :returns: ``(len(texts),)`` float32 relevance logits in input order, higher is
            better (unbounded; not comparable across models).
        :raises RerankerUnavailableError: the model cannot be loaded.
        """
        import numpy as np

        if not texts:
            return np.zeros(0, dtype=np.float32)
        self.load()
        order = sort_by_length(texts)
        scores = self._model.rerank(
            query, [texts[i] for i in order], batch_size=self.options.batch_size
        )
        out = np.empty(len(texts), dtype=np.float32)
        out[order] = np.fromiter(scores, dtype=np.float32, count=len(texts))
        return out


def _factory(options: CrossEncoderOptions, context: ArmContext) -> CrossEncoderReranker:
    return CrossEncoderReranker(options)


@hookimpl
def octomem_register_rerankers() -> list[ArmSpec]:
    """Offer the ``cross-encoder`` reranker (fastembed ONNX; off unless settings name it)."""
    return [
        ArmSpec(
            kind="reranker",
            name="cross-encoder",
            factory=_factory,
            options_model=CrossEncoderOptions,
            description="ONNX cross-encoder via fastembed (hub name or local model_path); "
            "off by default",
        )
    ]
