"""The bundled MiniLM's queries go straight to onnxruntime (``plugins/fastembed/query.py``),
on a session of their own thread count, and get fastembed's own vectors bit for bit."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from octomem.plugins.fastembed.embedder import FastembedEmbedder, FastembedOptions

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "queries.jsonl"
LOCOMO = LOCOMO if LOCOMO.is_file() else Path("/work/shared/data/locomo/queries.jsonl")
TEXTS = ["Where did Caroline go hiking last summer?", "ok", "", "   ", "naïve café — 東京 🙂?",
         "When did Melanie paint a sunrise?", "word " * 700,  # past the tokenizer's 512
         "What did the vet say about training with a leash, and why?"]


def _fastembed(embedder: FastembedEmbedder, text: str) -> np.ndarray:
    """The vector through fastembed's own batching path (what embed_query used)."""
    return embedder._checked(np.stack(list(embedder._model.query_embed(text))))[0]


def test_queries_equal_fastembeds_own_vectors_on_their_own_session() -> None:
    embedder = FastembedEmbedder(FastembedOptions(threads=2))  # query_threads 1 by default
    embedder.load()
    assert embedder._query is not None
    assert embedder._query.session is not embedder._model.model.model
    assert embedder._query.session.get_session_options().intra_op_num_threads == 1
    assert embedder._model.model.model.get_session_options().intra_op_num_threads == 2
    texts = list(TEXTS)
    if LOCOMO.is_file():  # the latency bench's questions, when the dataset is here
        texts += [json.loads(line)["text"] for line in LOCOMO.open(encoding="utf-8")][:300]
    for text in texts:
        got = embedder.embed_query(text)
        assert got.dtype == np.float32 and got.shape == (384,)
        assert np.array_equal(got, _fastembed(embedder, text)), text


def test_equal_thread_counts_share_one_session() -> None:
    embedder = FastembedEmbedder(FastembedOptions(threads=1, query_threads=1))
    vector = embedder.embed_query(TEXTS[0])
    assert embedder._query is not None and embedder._query.session is embedder._model.model.model
    assert np.array_equal(vector, _fastembed(embedder, TEXTS[0]))
    same = FastembedEmbedder(FastembedOptions(threads=2, query_threads=None))
    same.load()
    assert same._query is not None and same._query.session is same._model.model.model
