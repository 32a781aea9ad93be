"""The bundled MiniLM run straight through onnxruntime and tokenizers, without fastembed.

fastembed's ``TextEmbedding`` costs a process ~1-3 s of imports (its package imports its
image, sparse and late-interaction models too) and creates a session that octomem then
replaced. For the bundled model octomem needs only what fastembed would do with it, so
this module does exactly that with the same libraries: the tokenizer configured from the
shipped files the way fastembed configures it (:func:`load_tokenizer`: truncation at the
configured maximum, padding to the batch's longest text), int64 inputs, ``session.run``,
mean pooling over the attention mask summed in float64, L2 normalisation in float64, a
cast to the model's float dtype. The vectors are fastembed's own, bit for bit (checked
against fastembed over 300+ texts: ``tests/test_fastembed_query.py``).

A query may run on a session of its own thread count (``arms.fastembed.query_threads``):
a ~12-token question is too short for onnxruntime to gain from a second thread, and the
recall runs its keyword arm on the other core meanwhile.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy is imported where vectors are made: status and config stay light
    import numpy as np

#: Smallest norm a vector is divided by (fastembed's and torch's ``normalize`` default).
NORM_EPS = 1e-12


def session_options(threads: int, spin: bool, optimize: bool = True) -> Any:
    """Return onnxruntime session options.

    :param threads: intra- and inter-op threads.
    :param spin: let worker threads spin-wait between operators.
    :param optimize: all graph optimisations (``False``: none, for a graph saved already
        optimised by :func:`.requantize.optimized`).
    """
    from .runtime import import_onnxruntime

    ort = import_onnxruntime()
    options = ort.SessionOptions()
    level = ort.GraphOptimizationLevel
    options.graph_optimization_level = level.ORT_ENABLE_ALL if optimize else level.ORT_DISABLE_ALL
    options.intra_op_num_threads = options.inter_op_num_threads = threads
    if not spin:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    return options


def load_tokenizer(folder: Path) -> Any:
    """Return the ``tokenizers.Tokenizer`` of a model folder, configured as fastembed does.

    Reads ``tokenizer.json``, ``tokenizer_config.json`` and the optional
    ``special_tokens_map.json`` and ``config.json``: truncation at the smaller of the
    config's ``model_max_length`` / ``max_length`` (direction from ``truncation_side``,
    else the file's, else right), the map's special tokens added, padding to the longest
    text of a batch with the file's pad token (else the config's).

    :raises ValueError: no usable maximum length or no pad token.
    :raises OSError: a file cannot be read.
    """
    from tokenizers import AddedToken, Tokenizer

    def read(name: str) -> dict[str, Any]:
        path = folder / name
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}

    config, tokenizer_config = read("config.json"), read("tokenizer_config.json")
    limits = [v for v in map(tokenizer_config.get, ("model_max_length", "max_length"))
              if isinstance(v, int) and not isinstance(v, bool) and v > 0]
    if not limits:
        raise ValueError(f"{folder}: tokenizer_config.json gives no maximum length")
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    truncation = tokenizer.truncation or {}
    tokenizer.enable_truncation(max_length=min(limits), direction=tokenizer_config.get(
        "truncation_side") or truncation.get("direction", "right"))
    for value in read("special_tokens_map.json").values():
        for token in value if isinstance(value, list) else [value]:
            tokenizer.add_special_tokens([token if isinstance(token, str) else AddedToken(**token)])
    padding = tokenizer.padding or {}
    pad_token = padding.get("pad_token") or tokenizer_config.get("pad_token")
    if pad_token is None:
        raise ValueError(f"{folder}: no pad token")
    pad_id = padding.get("pad_id", config.get("pad_token_id"))
    tokenizer.enable_padding(
        direction=tokenizer_config.get("padding_side") or padding.get("direction", "right"),
        pad_id=tokenizer.token_to_id(pad_token) if pad_id is None else pad_id,
        pad_type_id=padding.get("pad_type_id", 0), pad_token=pad_token,
        pad_to_multiple_of=padding.get("pad_to_multiple_of"), length=None,
    )
    return tokenizer


class QueryEncoder:
    """Embed texts with a mean-pooled, L2-normalised ONNX sentence model.

    :param session: an ``onnxruntime.InferenceSession`` of the model (its inputs are
        ``input_ids`` and optionally ``attention_mask`` and ``token_type_ids``).
    :param tokenizer: the model's ``tokenizers.Tokenizer`` (:func:`load_tokenizer`).
    """

    def __init__(self, session: Any, tokenizer: Any) -> None:
        self.session = session
        self.tokenizer = tokenizer
        names = {node.name for node in session.get_inputs()}
        self._mask = "attention_mask" in names
        self._types = "token_type_ids" in names

    @classmethod
    def open(cls, path: str | Path, providers: list[str], tokenizer: Any, threads: int,
             spin: bool, optimize: bool = True) -> QueryEncoder:
        """Open a session of the ONNX file ``path`` with :func:`session_options`."""
        from .runtime import import_onnxruntime

        session = import_onnxruntime().InferenceSession(
            str(path), providers=providers, sess_options=session_options(threads, spin, optimize))
        return cls(session, tokenizer)

    def embed(self, text: str) -> np.ndarray:
        """Return ``text``'s vector.

        :returns: ``(1, dim)``, the model's float dtype, rows of unit L2 norm.
        """
        return self.embed_batch([text])

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """Return the vectors of ``texts`` run as one batch (padded to the longest).

        :returns: ``(len(texts), dim)``, the model's float dtype, rows of unit L2 norm.
        :raises ValueError: the batch needs padding and the graph has no mask input.
        """
        return self.prepared(texts)()

    def prepared(self, texts: Sequence[str]) -> Callable[[], np.ndarray]:
        """Tokenize ``texts`` now; return the rest of :meth:`embed_batch` (the ONNX run,
        which holds no GIL, then the pooling) as a call, so a recall can tokenize before
        its keyword arm starts on a worker and run the model meanwhile.

        :returns: a call giving :meth:`embed_batch`'s rows.
        :raises ValueError: the batch needs padding and the graph has no mask input.
        """
        import numpy as np

        encoded = self.tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feed = {"input_ids": ids}
        if self._mask:
            feed["attention_mask"] = mask
        elif not mask.all():
            raise ValueError("this model takes no attention mask: embed one text per call")
        if self._types:
            feed["token_type_ids"] = np.zeros(ids.shape, dtype=np.int64)

        def run() -> np.ndarray:
            output = self.session.run(None, feed)[0]
            sums = np.sum(output, axis=1, where=mask[:, :, np.newaxis].astype(bool),
                          dtype=np.float64)
            pooled = sums / np.maximum(np.sum(mask, axis=1, keepdims=True), 1e-9)
            norms = np.maximum(np.linalg.norm(pooled, ord=2, axis=1, keepdims=True), NORM_EPS)
            rows = pooled / norms
            if np.issubdtype(output.dtype, np.floating):
                return rows.astype(output.dtype, copy=False)
            return rows

        return run
