"""The ``cross-encoder`` reranker, and local ONNX folders, with tiny models built here.

No PyPI package ships cross-encoder weights, so each test writes a folder holding a
WordLevel ``tokenizer.json`` (built with ``tokenizers``) and an ONNX graph (built with
``onnx``) whose output is exactly computable:

- cross-encoder: logit = sum over the pair's tokens of a per-token weight;
- embedder: each token's hidden state is a row of a table (mean-pooled by fastembed).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from octomem.engine.arms import ArmContext, Embedder, Reranker
from octomem.engine.digests import file_sha256
from octomem.engine.errors import EmbedderUnavailableError, OctomemError
from octomem.engine.manager import load_registry
from octomem.plugins.cross_encoder.reranker import (
    CrossEncoderOptions,
    CrossEncoderReranker,
    RerankerUnavailableError,
)
from octomem.plugins.fastembed.embedder import FastembedEmbedder, FastembedOptions

onnx = pytest.importorskip("onnx")
TensorProto, helper, numpy_helper = onnx.TensorProto, onnx.helper, onnx.numpy_helper

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
WEIGHTS = {"reset": 1.0, "password": 3.0, "credentials": 2.0, "recipe": -1.0, "eggs": -1.0}
WORDS = [*WEIGHTS, "your", "now", "recover", "account", "the", "needs", "two"]
VOCAB = {w: i for i, w in enumerate(SPECIAL + WORDS)}


def _write_tokenizer(folder: Path) -> None:
    """Write a lowercase whitespace WordLevel tokenizer with BERT-style [CLS]/[SEP] templates."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    tok = Tokenizer(models.WordLevel(vocab=VOCAB, unk_token="[UNK]"))
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", VOCAB["[CLS]"]), ("[SEP]", VOCAB["[SEP]"])],
    )
    tok.add_special_tokens(SPECIAL)
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    config = {"model_max_length": 128, "pad_token": "[PAD]", "unk_token": "[UNK]"}
    (folder / "tokenizer_config.json").write_text(json.dumps(config))


def _save(graph: onnx.GraphProto, path: Path) -> None:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def _ids_input(name: str) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "seq"])


def _write_cross_encoder(folder: Path) -> None:
    """logits[b, 0] = sum_s weight[input_ids[b, s]] * attention_mask[b, s]."""
    table = np.zeros((len(VOCAB), 1), dtype=np.float32)
    for word, weight in WEIGHTS.items():
        table[VOCAB[word], 0] = weight
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["per_token"]),  # (b, s, 1)
        helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask_f", "axis2"], ["mask3"]),  # (b, s, 1)
        helper.make_node("Mul", ["per_token", "mask3"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", "axis1"], ["logits"], keepdims=0),  # (b, 1)
    ]
    graph = helper.make_graph(
        nodes, "tiny-cross-encoder",
        [_ids_input("input_ids"), _ids_input("attention_mask")],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])],
        initializer=[
            numpy_helper.from_array(table, "table"),
            numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        ],
    )
    _save(graph, folder / "model.onnx")


EMBED_TABLE = np.zeros((len(VOCAB), 4), dtype=np.float32)
EMBED_TABLE[VOCAB["[CLS]"]] = EMBED_TABLE[VOCAB["[SEP]"]] = [0, 0, 0, 1]
EMBED_TABLE[VOCAB["password"]] = [1, 0, 0, 0]
EMBED_TABLE[VOCAB["eggs"]] = [0, 0, 1, 0]


def _write_token_embedder(folder: Path) -> None:
    """last_hidden_state[b, s] = EMBED_TABLE[input_ids[b, s]] (4-d)."""
    graph = helper.make_graph(
        [helper.make_node("Gather", ["table", "input_ids"], ["last_hidden_state"])],
        "tiny-embedder",
        [_ids_input("input_ids"), _ids_input("attention_mask")],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["b", "s", 4])],
        initializer=[numpy_helper.from_array(EMBED_TABLE, "table")],
    )
    _save(graph, folder / "model.onnx")


@pytest.fixture
def cross_encoder_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "tiny-cross-encoder"
    _write_tokenizer(folder)
    _write_cross_encoder(folder)
    return folder


@pytest.fixture
def embedder_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "tiny-embedder"
    _write_tokenizer(folder)
    _write_token_embedder(folder)
    return folder


TEXTS = ["the recipe needs two eggs", "reset your password now", "recover account credentials"]


def test_reranks_from_a_local_folder(cross_encoder_dir: Path) -> None:
    reranker = CrossEncoderReranker(CrossEncoderOptions(model_path=cross_encoder_dir, threads=1))
    assert not reranker.loaded  # construction creates no session
    scores = reranker.rerank("reset password", TEXTS)
    assert reranker.loaded
    assert scores.dtype == np.float32 and scores.shape == (3,)
    # query tokens add 1 + 3 to every pair; the passages add -2, 4 and 2
    np.testing.assert_allclose(scores, [2.0, 8.0, 6.0])
    assert [TEXTS[i] for i in np.argsort(-scores)] == [TEXTS[1], TEXTS[2], TEXTS[0]]


def test_scores_follow_input_order_whatever_the_batching(cross_encoder_dir: Path) -> None:
    reranker = CrossEncoderReranker(
        CrossEncoderOptions(model_path=cross_encoder_dir, batch_size=1, threads=1)
    )
    reversed_scores = reranker.rerank("reset password", TEXTS[::-1])
    np.testing.assert_allclose(reversed_scores, [6.0, 8.0, 2.0])


def test_no_texts_gives_empty_scores_without_loading(cross_encoder_dir: Path) -> None:
    reranker = CrossEncoderReranker(CrossEncoderOptions(model_path=cross_encoder_dir))
    scores = reranker.rerank("anything", [])
    assert scores.shape == (0,) and scores.dtype == np.float32
    assert not reranker.loaded


def test_model_id_names_the_onnx_file(cross_encoder_dir: Path) -> None:
    reranker = CrossEncoderReranker(CrossEncoderOptions(model_path=cross_encoder_dir))
    digest = file_sha256(cross_encoder_dir / "model.onnx")[:12]
    assert reranker.model_id == f"fastembed:local:tiny-cross-encoder:sha256-{digest}"


def test_missing_folder_is_unavailable(tmp_path: Path) -> None:
    reranker = CrossEncoderReranker(CrossEncoderOptions(model_path=tmp_path / "absent"))
    with pytest.raises(RerankerUnavailableError, match="absent") as info:
        reranker.rerank("q", ["a passage"])
    assert isinstance(info.value, EmbedderUnavailableError)
    assert isinstance(info.value, OctomemError)


def test_folder_without_tokenizer_is_unavailable(cross_encoder_dir: Path) -> None:
    (cross_encoder_dir / "tokenizer.json").unlink()
    reranker = CrossEncoderReranker(CrossEncoderOptions(model_path=cross_encoder_dir))
    with pytest.raises(RerankerUnavailableError, match="tokenizer.json"):
        reranker.load()


def test_hub_model_offline_fails_fast(tmp_path: Path) -> None:
    reranker = CrossEncoderReranker(CrossEncoderOptions(cache_dir=tmp_path))
    start = time.perf_counter()
    with pytest.raises(RerankerUnavailableError, match="HF_HUB_OFFLINE"):
        reranker.rerank("q", ["a passage"])
    assert time.perf_counter() - start < 5


def test_registered_off_by_default_and_builds_a_reranker(cross_encoder_dir: Path) -> None:
    from octomem.engine.settings import PipelineSettings

    assert PipelineSettings().reranker == "conversation"  # the cross-encoder is opt-in
    spec = load_registry().get("reranker", "cross-encoder")
    options = spec.options_model(model_path=str(cross_encoder_dir))
    reranker = spec.factory(options, ArmContext(root=cross_encoder_dir))
    assert isinstance(reranker, Reranker)
    assert reranker.rerank("password", ["eggs", "password"]).tolist() == [2.0, 6.0]


def test_model_and_model_path_together_are_rejected(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="either model or model_path"):
        CrossEncoderOptions(model="other/model", model_path=tmp_path)


# ---- the fastembed embedder's model_path: the same local-folder loading path ----------


def test_embedder_loads_a_local_model_path_with_mean_pooling(embedder_dir: Path) -> None:
    embedder = FastembedEmbedder(FastembedOptions(model_path=embedder_dir, dim=4, threads=1))
    assert isinstance(embedder, Embedder) and not embedder.loaded
    assert embedder.count_tokens(["password eggs", ""]) == [2, 0]
    assert not embedder.loaded
    vectors = embedder.embed_documents(["password", "eggs eggs"])
    # mean over [CLS] x [SEP]: password -> (1, 0, 0, 2)/3, eggs eggs -> (0, 0, 2, 2)/4
    expected = np.array([[1, 0, 0, 2], [0, 0, 1, 1]], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(vectors, expected, atol=1e-6)
    digest = file_sha256(embedder_dir / "model.onnx")[:12]
    assert embedder.model_id == f"fastembed:local:tiny-embedder:sha256-{digest}:mean:4"


def test_embedder_cls_pooling_and_dim_mismatch(embedder_dir: Path) -> None:
    cls = FastembedEmbedder(FastembedOptions(model_path=embedder_dir, dim=4, pooling="cls"))
    np.testing.assert_allclose(cls.embed_query("password"), [0, 0, 0, 1], atol=1e-6)
    wrong = FastembedEmbedder(FastembedOptions(model_path=embedder_dir, dim=8))
    with pytest.raises(EmbedderUnavailableError, match="dim is 8"):
        wrong.embed_documents(["password"])
