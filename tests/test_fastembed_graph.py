"""The bundled MiniLM's graph is optimised once, simplified, saved and run as saved; the
vectors stay bit for bit those of the original file (``tests/test_fastembed_query.py``
compares them with fastembed's own session)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from octomem.plugins.fastembed import graph
from octomem.plugins.fastembed.embedder import FastembedEmbedder, FastembedOptions

TEXTS = ["Where did Caroline go hiking last summer?", "ok", "word " * 300]


@pytest.mark.parametrize("requantize", [True, False])
def test_prepared_graph_is_cached_smaller_and_gives_the_same_vectors(
    tmp_path: Path, requantize: bool
) -> None:
    embedder = FastembedEmbedder(FastembedOptions(cache_dir=tmp_path, requantize=requantize))
    embedder.load()
    path = embedder._bundled_path
    suffix = ".run2-unpadded.onnx" if requantize else ".run2.onnx"  # one text per call?
    assert path.parent == tmp_path / "models" and path.name.endswith(suffix)
    assert not embedder._optimize  # sessions open it as saved
    assert embedder._query is not None
    options = embedder._query.session.get_session_options()
    assert str(options.graph_optimization_level) == "GraphOptimizationLevel.ORT_DISABLE_ALL"
    model = onnx.load(str(path), load_external_data=False)
    ops = Counter(n.op_type for n in model.graph.node)
    assert ops["IsNaN"] == 0 and ops["Softmax"] == 6 and ops["Slice"] <= 2
    inputs = {i.name for i in model.graph.input}
    assert ("attention_mask" in inputs) is not requantize and ("GatherND" in ops) is not requantize
    mtime = path.stat().st_mtime_ns
    again = FastembedEmbedder(FastembedOptions(cache_dir=tmp_path, requantize=requantize))
    assert np.array_equal(again.embed_documents(TEXTS), embedder.embed_documents(TEXTS))
    assert again._bundled_path == path and path.stat().st_mtime_ns == mtime  # not rebuilt


def test_an_unbuildable_copy_falls_back_to_optimising_the_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    reference = FastembedEmbedder(FastembedOptions(cache_dir=tmp_path / "a"))
    want = reference.embed_documents(TEXTS)

    def broken(source: Path, target: Path) -> None:
        raise ImportError("No module named 'onnx'")

    monkeypatch.setattr(graph, "_build", broken)
    embedder = FastembedEmbedder(FastembedOptions(cache_dir=tmp_path / "a"))
    assert embedder.embed_documents(TEXTS).shape == (3, 384)  # cached already: no build
    fresh = FastembedEmbedder(FastembedOptions(cache_dir=tmp_path / "b"))
    assert np.array_equal(fresh.embed_documents(TEXTS), want)
    assert fresh._optimize and ".run2" not in fresh._bundled_path.name


def test_simplify_leaves_a_graph_without_the_patterns_alone() -> None:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    nodes = [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1, 3]),
             helper.make_node("Softmax", ["t"], ["s"]),
             helper.make_node("IsNaN", ["s"], ["n"]),
             helper.make_node("Where", ["n", "s", "t"], ["y"])]  # not Where(isnan(s), _, s)
    model = helper.make_graph(nodes, "g", [x], [y])
    assert graph.simplify(model) == 0 and len(model.node) == 4


def test_a_graph_without_the_mask_refuses_a_padded_batch(tmp_path: Path) -> None:
    embedder = FastembedEmbedder(FastembedOptions(cache_dir=tmp_path, threads=1))
    embedder.load()
    assert embedder._query is not None and not embedder._query._mask
    with pytest.raises(ValueError, match="one text per call"):
        embedder._query.embed_batch(["short", "a somewhat longer text than that"])
    assert embedder._query.embed_batch(["same length", "equal length"]).shape == (2, 384)
