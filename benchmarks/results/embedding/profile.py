"""Per-operator time of one query's embedding (onnxruntime's profiler), for the
re-quantized file as sessions optimised it at start and for the prepared graph.

    python benchmarks/results/embedding/profile.py [QUESTIONS]

Runs the first QUESTIONS LoCoMo questions (default 200) through a 1-thread session of
each, with profiling on, and prints operators per run and the share of kernel time per
operator type. The profiler's own cost inflates small operators: read shares, not ms.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections import Counter

import numpy as np
import onnxruntime as ort

from octomem.plugins.fastembed.embedder import FastembedEmbedder, _bundled_onnx
from octomem.plugins.fastembed.query import session_options
from octomem.plugins.fastembed.requantize import requantized_path

DATA = "/work/shared/data/locomo/queries.jsonl"


def profile(path: str, optimize: bool, feeds: list[dict[str, np.ndarray]]) -> None:
    options = session_options(1, False, optimize)
    options.enable_profiling = True
    options.profile_file_prefix = os.path.join(tempfile.mkdtemp(), "profile")
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    names = {node.name for node in session.get_inputs()}
    for feed in feeds:
        session.run(None, {k: v for k, v in feed.items() if k in names})
    events = json.load(open(session.end_profiling(), encoding="utf-8"))
    kernel, count = Counter(), Counter()
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            kernel[event["args"]["op_name"]] += event["dur"]
            count[event["args"]["op_name"]] += 1
    total = sum(kernel.values())
    print(f"\n{path}: {sum(count.values()) / len(feeds):.0f} operators per run")
    print("| operator | per run | share of kernel time |")
    print("|---|---:|---:|")
    for op, micros in kernel.most_common():
        print(f"| {op} | {count[op] / len(feeds):.0f} | {100 * micros / total:.1f} % |")


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    texts = [json.loads(line)["text"] for line in open(DATA, encoding="utf-8")][:count]
    embedder = FastembedEmbedder()
    embedder.load()
    assert embedder._query is not None
    feeds = []
    for text in texts:
        ids = np.array([embedder._query.tokenizer.encode(text).ids], dtype=np.int64)
        feeds.append({"input_ids": ids, "attention_mask": np.ones_like(ids),
                      "token_type_ids": np.zeros_like(ids)})
    print(f"load average {os.getloadavg()[0]:.2f}")
    profile(str(requantized_path(_bundled_onnx()[1])), True, feeds)
    profile(str(embedder._bundled_path), False, feeds)


if __name__ == "__main__":
    main()
