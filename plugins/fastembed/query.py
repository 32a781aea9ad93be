"""One query's embedding straight through onnxruntime, for the bundled MiniLM.

fastembed's ``query_embed`` takes a query through its batching path (a generator per
call, the session's input names read again, a token-type array built per row); for one
short query that is ~0.3 ms of the calling thread's CPU on top of the model. This module
runs the same steps for one text — fastembed's own tokenizer (``encode_batch`` of the one
text: no padding, its truncation), the same int64 inputs, ``session.run``, fastembed's
own ``mean_pooling`` and ``normalize`` — so the vector is the one ``query_embed`` gives,
bit for bit (``tests/test_fastembed_query.py``).

It may run on its own session with its own thread count (``arms.fastembed.query_threads``):
a ~12-token question is too short for onnxruntime to gain from a second thread, and the
recall runs its keyword arm on the other core meanwhile.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy is imported where vectors are made: status and config stay light
    import numpy as np


def session_options(threads: int, spin: bool) -> Any:
    """Return onnxruntime session options: all graph optimisations, ``threads`` intra-
    and inter-op threads, worker threads spin-waiting only when ``spin``."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = options.inter_op_num_threads = threads
    if not spin:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    return options


class QueryEncoder:
    """Embed one text with a mean-pooled, L2-normalised ONNX sentence model.

    :param session: an ``onnxruntime.InferenceSession`` of the model (its inputs are
        ``input_ids`` and optionally ``attention_mask`` and ``token_type_ids``).
    :param tokenizer: fastembed's configured ``tokenizers.Tokenizer`` for that model.
    """

    def __init__(self, session: Any, tokenizer: Any) -> None:
        self.session = session
        self.tokenizer = tokenizer
        names = {node.name for node in session.get_inputs()}
        self._mask = "attention_mask" in names
        self._types = "token_type_ids" in names

    @classmethod
    def open(cls, path: str | Path, providers: list[str], tokenizer: Any, threads: int,
             spin: bool) -> QueryEncoder:
        """Open a session of the ONNX file ``path`` with :func:`session_options`."""
        import onnxruntime as ort

        session = ort.InferenceSession(str(path), providers=providers,
                                       sess_options=session_options(threads, spin))
        return cls(session, tokenizer)

    def embed(self, text: str) -> np.ndarray:
        """Return ``text``'s vector as fastembed's ``query_embed`` gives it.

        :returns: ``(1, dim)``, the model's float dtype, rows of unit L2 norm.
        """
        import numpy as np
        from fastembed.common.utils import mean_pooling, normalize

        encoded = self.tokenizer.encode_batch([text])
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feed = {"input_ids": ids}
        if self._mask:
            feed["attention_mask"] = mask
        if self._types:
            feed["token_type_ids"] = np.zeros(ids.shape, dtype=np.int64)
        output = self.session.run(None, feed)[0]
        rows = normalize(mean_pooling(output, mask))
        if np.issubdtype(output.dtype, np.floating):
            return rows.astype(output.dtype, copy=False)
        return rows
