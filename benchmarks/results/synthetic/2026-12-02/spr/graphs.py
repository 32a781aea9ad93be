"""Variants of the bundled MiniLM's prepared query graph (``plugins/fastembed/graph.py``),
compared with the shipped one: are the outputs the same bits, how close are the pooled
vectors, and how much CPU does one query take (calling thread, 1 thread, interleaved).

    python benchmarks/results/synthetic/2026-12-02/spr/graphs.py OUT_DIR [ROUNDS]

Variants (written to OUT_DIR):

- ``ln``: the re-quantized file optimised as the shipped graph is, with onnxruntime's
  ``SkipLayerNormFusion`` disabled (12 ``SkipLayerNormalization`` become ``Add`` +
  ``LayerNormalization``), then :func:`~octomem.plugins.fastembed.graph.simplify`;
- ``gelu``: the shipped graph with each exact GELU (``Div, Erf, Add, Mul, Mul``) as one
  ``com.microsoft.Gelu``;
- ``ln_gelu``: both;
- ``folded``: the shipped graph with the attention's Q, K and V transposes folded into
  ``FusedMatMul``'s ``transBatch`` attributes (one text per call only).

Texts: the 1,109 SciFact claims, 1,000 LoCoMo questions and the first 1,000 SciFact
abstracts (600 characters); CPU over the first 300 claims, ROUNDS times (default 3).
"""

from __future__ import annotations

import itertools
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper, numpy_helper

from octomem.plugins.fastembed.embedder import FastembedEmbedder, _bundled_onnx
from octomem.plugins.fastembed.graph import simplify
from octomem.plugins.fastembed.query import QueryEncoder
from octomem.plugins.fastembed.requantize import requantized_path

DATA = Path("/work/shared/data")


def build_ln(target: Path) -> None:
    """The shipped recipe with ``SkipLayerNormFusion`` disabled."""
    with tempfile.TemporaryDirectory() as tmp:
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        options.optimized_model_filepath = f"{tmp}/opt.onnx"
        ort.InferenceSession(str(requantized_path(_bundled_onnx()[1])), options,
                             providers=["CPUExecutionProvider"],
                             disabled_optimizers=["SkipLayerNormFusion"])
        model = onnx.load(f"{tmp}/opt.onnx")
    simplify(model.graph, True)
    onnx.save(model, str(target))


def _links(nodes: list) -> tuple[dict, dict]:
    producer = {out: n for n in nodes for out in n.output}
    users: dict[str, list] = {}
    for n in nodes:
        for name in n.input:
            users.setdefault(name, []).append(n)
    return producer, users


def _attr(node: object, name: str) -> object:
    return next((helper.get_attribute_value(a) for a in node.attribute if a.name == name), None)


def fuse_gelu(source: Path, target: Path) -> None:
    """Each ``Mul(x, Mul(0.5, Add(Erf(Div(x, sqrt 2)), 1)))`` as one ``Gelu``."""
    model = onnx.load(str(source))
    nodes = list(model.graph.node)
    producer, users = _links(nodes)
    drop, new = set(), {}
    for erf in (n for n in nodes if n.op_type == "Erf"):
        div = producer[erf.input[0]]
        add = users[erf.output[0]][0]
        half = users[add.output[0]][0]
        mul = users[half.output[0]][0]
        assert (div.op_type, add.op_type, half.op_type, mul.op_type) == ("Div", "Add", "Mul", "Mul")
        new[id(mul)] = helper.make_node("Gelu", [div.input[0]], [mul.output[0]],
                                        domain="com.microsoft", name=f"{mul.name}/gelu")
        drop |= {id(div), id(erf), id(add), id(half)}
    kept = [new.get(id(n), n) for n in nodes if id(n) not in drop]
    del model.graph.node[:]
    model.graph.node.extend(kept)
    onnx.save(model, str(target))


def fold_transposes(source: Path, target: Path) -> None:
    """Q, K, V reshaped to (seq, 12, 32) and read through ``transBatch`` (batch of one)."""
    model = onnx.load(str(source))
    graph = model.graph
    nodes = list(graph.node)
    producer, users = _links(nodes)
    graph.initializer.append(numpy_helper.from_array(np.array([12], np.int64), "octomem_heads"))
    seq = next(n.input[1] for n in nodes if n.op_type == "Concat" and len(n.input) == 4)
    shape = helper.make_node("Concat", [seq, "octomem_heads", "val_55"], ["octomem_shd"], axis=0)
    drop, new = set(), {}
    for soft in (n for n in nodes if n.op_type == "Softmax"):
        qk = producer[soft.input[0]]
        tq, tk = producer[qk.input[0]], producer[qk.input[1]]
        av = users[soft.output[0]][0]
        tv = producer[av.input[1]]
        out = users[av.output[0]][0]
        for r in (producer[tq.input[0]], producer[tk.input[0]], producer[tv.input[0]]):
            new[id(r)] = helper.make_node("Reshape", [r.input[0], "octomem_shd"], [r.output[0]])
        new[id(qk)] = helper.make_node(
            "FusedMatMul", [tq.input[0], tk.input[0]], [qk.output[0]], domain="com.microsoft",
            alpha=_attr(qk, "alpha"), transB=1, transBatchA=1, transBatchB=1)
        new[id(av)] = helper.make_node("FusedMatMul", [soft.output[0], tv.input[0]],
                                       [av.output[0]], domain="com.microsoft", transBatchB=1)
        new[id(out)] = helper.make_node("Transpose", [av.output[0]], [out.output[0]],
                                        perm=[1, 0, 2])
        drop |= {id(tq), id(tk), id(tv)}
    kept = []
    for n in nodes:
        if id(n) not in drop:
            kept.append(new.get(id(n), n))
            if seq in n.output:
                kept.append(shape)
    del graph.node[:]
    graph.node.extend(kept)
    onnx.save(model, str(target))


def texts() -> list[str]:
    def read(path: Path, n: int | None = None) -> list[str]:
        with path.open(encoding="utf-8") as fh:
            return [json.loads(line)["text"][:600] for line in itertools.islice(fh, n)]
    return (read(DATA / "scifact/queries.jsonl") + read(DATA / "locomo/queries.jsonl", 1000)
            + read(DATA / "scifact/corpus.jsonl", 1000))


def main() -> None:
    out, rounds = Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 3
    out.mkdir(parents=True, exist_ok=True)
    embedder = FastembedEmbedder()
    embedder.load()
    shipped = embedder._query
    assert shipped is not None
    files = {"ln": out / "ln.onnx", "gelu": out / "gelu.onnx", "ln_gelu": out / "ln_gelu.onnx",
             "folded": out / "folded.onnx"}
    build_ln(files["ln"])
    fuse_gelu(embedder._bundled_path, files["gelu"])
    fuse_gelu(files["ln"], files["ln_gelu"])
    fold_transposes(embedder._bundled_path, files["folded"])
    encoders = {"shipped": shipped} | {
        name: QueryEncoder.open(path, ["CPUExecutionProvider"], shipped.tokenizer, 1, False,
                                False) for name, path in files.items()}
    every = texts()
    print(f"{len(every)} texts; load {os.getloadavg()[0]:.2f}")
    reference = [shipped.session.run(None, _feed(shipped, t))[0] for t in every]
    ref_vectors = np.stack([shipped.embed(t)[0] for t in every])
    for name, enc in encoders.items():
        outputs = [enc.session.run(None, _feed(enc, t))[0] for t in every]
        differ = sum(not np.array_equal(a, b) for a, b in zip(outputs, reference, strict=True))
        vectors = np.stack([enc.embed(t)[0] for t in every])
        cos = np.einsum("ij,ij->i", vectors, ref_vectors)
        ops = len(onnx.load(str(files.get(name, embedder._bundled_path))).graph.node)
        print(f"  {name:8s} {ops} operators; last_hidden_state not the same bits for {differ} "
              f"of {len(every)}; pooled cosine to shipped mean {cos.mean():.6f} "
              f"min {cos.min():.6f}")
    cpu: dict[str, list[int]] = {name: [] for name in encoders}
    names = list(encoders)
    for _ in range(rounds):
        for i, text in enumerate(every[:300]):
            for name in names[i % len(names):] + names[:i % len(names)]:
                feed = _feed(encoders[name], text)
                start = time.thread_time_ns()
                encoders[name].session.run(None, feed)
                cpu[name].append(time.thread_time_ns() - start)
    base = np.array(cpu["shipped"], float)
    print(f"CPU of session.run, 300 claims x {rounds}, interleaved; load {os.getloadavg()[0]:.2f}")
    for name, values in cpu.items():
        v = np.array(values, float)
        print(f"  {name:8s} p50 {np.median(v) / 1e6:.3f} ms  p10 {np.percentile(v, 10) / 1e6:.3f}"
              f"  median per-call ratio to shipped {np.median(v / base):.3f}")


def _feed(encoder: QueryEncoder, text: str) -> dict[str, np.ndarray]:
    ids = np.array([encoder.tokenizer.encode(text).ids], dtype=np.int64)
    names = {i.name for i in encoder.session.get_inputs()}
    feed = {"input_ids": ids, "token_type_ids": np.zeros_like(ids)}
    return {k: v for k, v in feed.items() if k in names}


if __name__ == "__main__":
    main()
