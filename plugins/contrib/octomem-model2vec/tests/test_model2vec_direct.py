"""The plugin's own reader (tokenizers + safetensors, :mod:`octomem_model2vec.static`)
gives model2vec's vectors bit for bit: the default model (int8 rows, a token mapping and
weights, a Unigram tokenizer), a word-level model with an unknown token (float32, no
mapping: texts of one length embedded together), float16 rows without normalising, and
sentence-transformers' nested layout; at several ``max_tokens``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from octomem_model2vec import Model2VecEmbedder, Model2VecOptions, default_model_folder
from octomem_model2vec.static import find_layout, load

#: model2vec is the reference here only (pip install "octomem-model2vec[test]").
model2vec = pytest.importorskip("model2vec", reason="the reference: install the [test] extra")

TEXTS = [
    "Which database should the billing service use?",
    "PostgreSQL 16, because invoices need row-level security and the audit log.",
    "Nightly backups go to the cold-storage bucket in Frankfurt; restores take an hour.",
    "", " ", ".", "red", "RED green blue dark red", "naïve café, Ünïcödé — 日本語のテキスト",
    "\x00\t\n", "x" * 3000, "word " * 700, "dark red " * 40, "blue",
    "Vitamin D deficiency and bone mineral density in older adults: a cohort study.",
]


def _reference(folder: Path, max_tokens: int, texts: list[str]) -> np.ndarray:
    model = model2vec.StaticModel.from_pretrained(str(folder), max_length=max_tokens)
    return model.encode(texts, use_multiprocessing=False, show_progress_bar=False)


@pytest.mark.parametrize("max_tokens", [256, 7, 1])
def test_the_default_model_gives_model2vecs_vectors_bit_for_bit(max_tokens: int) -> None:
    folder, _ = default_model_folder()
    ours, theirs = load(folder, max_tokens).encode(TEXTS), _reference(folder, max_tokens, TEXTS)
    assert ours.dtype == theirs.dtype == np.float32 and ours.shape == (len(TEXTS), 64)
    assert ours.tobytes() == theirs.tobytes()
    reference = model2vec.StaticModel.from_pretrained(str(folder), max_length=max_tokens)
    model = load(folder, max_tokens)
    assert (model.unk_id, model.median_token_length) == (reference.unk_token_id,
                                                         reference.median_token_length)


def test_the_embedders_rows_are_model2vecs_renormalised(tiny_model: Path) -> None:
    folder, _ = default_model_folder()
    theirs = _reference(folder, 256, TEXTS)
    norms = np.linalg.norm(theirs, axis=1, keepdims=True)
    expected = np.where(norms == 0, 1.0, theirs / np.where(norms == 0, 1.0, norms))
    expected[norms[:, 0] == 0] = np.eye(64, dtype=np.float32)[0]
    rows = Model2VecEmbedder().embed_documents(TEXTS)
    assert rows.tobytes() == expected.astype(np.float32).tobytes()


@pytest.mark.parametrize("max_tokens", [256, 2])
def test_a_word_level_model_without_mapping_gives_the_same_vectors(tiny_model: Path,
                                                                  max_tokens: int) -> None:
    ours = load(tiny_model, max_tokens).encode(TEXTS)
    assert ours.tobytes() == _reference(tiny_model, max_tokens, TEXTS).tobytes()
    assert load(tiny_model, 256).unk_id == 0  # "[UNK]", dropped from every text


def test_float16_rows_unnormalised_and_the_nested_layout(tiny_model: Path,
                                                         tmp_path: Path) -> None:
    from safetensors.numpy import save_file

    flat = tiny_model
    rows = np.random.default_rng(7).normal(size=(5, 3)).astype(np.float16)
    save_file({"embeddings": rows}, str(flat / "model.safetensors"))
    (flat / "config.json").write_text(json.dumps({"normalize": False}))
    ours = load(flat, 256).encode(TEXTS)
    assert ours.dtype == np.float16 and ours.tobytes() == _reference(flat, 256, TEXTS).tobytes()
    nested = tmp_path / "st"
    (nested / "0_StaticEmbedding").mkdir(parents=True)
    (flat / "tokenizer.json").rename(nested / "0_StaticEmbedding" / "tokenizer.json")
    save_file({"embedding.weight": rows.astype(np.float32)},
              str(nested / "0_StaticEmbedding" / "model.safetensors"))
    (nested / "config_sentence_transformers.json").write_text("{}")
    assert find_layout(nested)[3] == "embedding.weight"
    ours = load(nested, 256).encode(TEXTS)
    assert ours.tobytes() == _reference(nested, 256, TEXTS).tobytes()


def test_vectors_that_do_not_match_the_vocabulary_are_refused(tiny_model: Path) -> None:
    from safetensors.numpy import save_file

    save_file({"embeddings": np.zeros((4, 3), dtype=np.float32)},
              str(tiny_model / "model.safetensors"))
    with pytest.raises(ValueError, match=r"4 vectors for 5 tokens, and no token mapping"):
        load(tiny_model, 256)
    embedder = Model2VecEmbedder(Model2VecOptions(model_path=tiny_model))
    with pytest.raises(Exception, match=r"model2vec embedder: cannot load .*tiny-m2v.*: "
                                        r"ValueError: .*4 vectors for 5 tokens"):
        embedder.embed_query("red")
