"""The packaged MiniLM's onnxruntime session: no spin-waiting worker threads by default,
and the same vectors as fastembed's own session."""

from __future__ import annotations

import numpy as np

from octomem.plugins.fastembed.embedder import FastembedEmbedder, FastembedOptions

TEXTS = ["Where did Caroline go hiking last summer?",
         "A tiny guesthouse in Alfama, right under the castle walls.", "ok"]


def _spinning(embedder: FastembedEmbedder) -> str:
    """The documents' session's setting, ``"1"`` (onnxruntime's default) when never set."""
    assert embedder._documents is not None
    options = embedder._documents.session.get_session_options()
    key = "session.intra_op.allow_spinning"
    try:
        return str(options.get_session_config_entry(key))
    except RuntimeError:  # never set
        return "1"


def test_workers_do_not_spin_and_vectors_are_unchanged() -> None:
    quiet = FastembedEmbedder(FastembedOptions(threads=2))
    spinning = FastembedEmbedder(FastembedOptions(threads=2, spin=True))
    queries = [quiet.embed_query(t) for t in TEXTS]
    assert np.array_equal(np.stack(queries), np.stack([spinning.embed_query(t) for t in TEXTS]))
    assert np.array_equal(quiet.embed_documents(TEXTS), spinning.embed_documents(TEXTS))
    assert _spinning(quiet) == "0"
    assert quiet._documents is not None
    assert quiet._documents.session.get_session_options().intra_op_num_threads == 2
    assert _spinning(spinning) == "1"
