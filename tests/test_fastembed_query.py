"""The bundled MiniLM runs without fastembed's classes (``plugins/fastembed/query.py``):
queries on a session of their own thread count, documents on one opened at first use, and
the vectors are fastembed's own bit for bit, for queries and documents, re-quantized or not."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from octomem.plugins.fastembed.embedder import FastembedEmbedder, FastembedOptions
from octomem.plugins.fastembed.minilm_tokenizer import tokenizer_dir
from octomem.plugins.fastembed.query import load_tokenizer

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "queries.jsonl"
LOCOMO = LOCOMO if LOCOMO.is_file() else Path("/work/shared/data/locomo/queries.jsonl")
TEXTS = ["Where did Caroline go hiking last summer?", "ok", "", "   ", "naïve café — 東京 🙂?",
         "When did Melanie paint a sunrise?", "word " * 700,  # past the tokenizer's 512
         "What did the vet say about training with a leash, and why?"]


def _texts() -> list[str]:
    texts = list(TEXTS)
    if LOCOMO.is_file():  # the latency bench's questions, when the dataset is here
        texts += [json.loads(line)["text"] for line in LOCOMO.open(encoding="utf-8")][:300]
    return texts


def _fastembed_model(embedder: FastembedEmbedder) -> Any:
    """fastembed's own ``TextEmbedding`` of the file the embedder runs (what it used)."""
    from fastembed import TextEmbedding
    from fastembed.common.model_description import ModelSource, PoolingType

    embedder.load()
    name = f"test/minilm-{embedder._bundled_path.name}"
    if not any(d["model"] == name for d in TextEmbedding.list_supported_models()):
        TextEmbedding.add_custom_model(
            model=name, pooling=PoolingType.MEAN, normalization=True,
            sources=ModelSource(hf=name), dim=384, model_file=str(embedder._bundled_path))
    return TextEmbedding(name, specific_model_path=str(tokenizer_dir()), threads=1)


def test_tokenizer_is_configured_as_fastembeds() -> None:
    from fastembed.common.preprocessor_utils import load_tokenizer as fastembeds

    ours, theirs = load_tokenizer(tokenizer_dir()), fastembeds(tokenizer_dir())[0]
    assert ours.truncation == theirs.truncation and ours.truncation["max_length"] == 512
    assert ours.padding == theirs.padding and ours.padding["length"] is None
    texts = _texts()
    for a, b in zip(ours.encode_batch(texts), theirs.encode_batch(texts), strict=True):
        assert a.ids == b.ids and a.attention_mask == b.attention_mask


@pytest.mark.parametrize("requantize", [True, False])
def test_vectors_equal_fastembeds_own(requantize: bool) -> None:
    embedder = FastembedEmbedder(FastembedOptions(threads=2, requantize=requantize))
    reference = _fastembed_model(embedder)
    texts = _texts()
    for text in texts:
        got = embedder.embed_query(text)
        assert got.dtype == np.float32 and got.shape == (384,)
        want = embedder._checked(np.stack(list(reference.query_embed(text))))[0]
        assert np.array_equal(got, want), text
    documents = texts[:40]
    size = embedder._batch_size()
    assert size == (1 if requantize else 32)
    want = np.stack(list(reference.passage_embed(sorted(documents, key=len), batch_size=size)))
    got = embedder.embed_documents(sorted(documents, key=len))
    assert np.array_equal(got, embedder._checked(want))


def test_query_session_of_its_own_and_documents_session_at_first_use() -> None:
    embedder = FastembedEmbedder(FastembedOptions(threads=2))  # query_threads 1 by default
    embedder.load()
    assert embedder.loaded and embedder._query is not None and embedder._documents is None
    assert embedder._query.session.get_session_options().intra_op_num_threads == 1
    vector = embedder.embed_documents([TEXTS[0]])[0]
    assert embedder._documents is not None and embedder._documents.session is not (
        embedder._query.session)
    assert embedder._documents.session.get_session_options().intra_op_num_threads == 2
    assert np.array_equal(vector, embedder.embed_query(TEXTS[0]))  # batch 1: same vector


def test_equal_thread_counts_share_one_session() -> None:
    embedder = FastembedEmbedder(FastembedOptions(threads=1, query_threads=1))
    embedder.embed_documents([TEXTS[0]])
    assert embedder._documents is None  # the query's session serves documents too
    same = FastembedEmbedder(FastembedOptions(threads=2, query_threads=None))
    same.embed_documents([TEXTS[0]])
    assert same._documents is None and same._query is not None
    assert same._query.session.get_session_options().intra_op_num_threads == 2


def test_loading_the_bundled_model_does_not_import_fastembed() -> None:
    import subprocess

    code = ("import sys\nfrom octomem.plugins.fastembed.embedder import FastembedEmbedder\n"
            "e = FastembedEmbedder(); e.load(); e.embed_query('hello'); e.embed_documents(['x'])\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'fastembed'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
