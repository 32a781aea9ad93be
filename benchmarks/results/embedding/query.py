"""One query's embedding with the bundled MiniLM: the re-quantized file as sessions opened
it before (all optimisations at every start) against the prepared graph
(``plugins/fastembed/graph.py``), in one process, interleaved call by call.

    python benchmarks/results/embedding/query.py [ROUNDS] [QUESTIONS]

QUESTIONS: the first N LoCoMo questions (``../shared/data/locomo/queries.jsonl``,
default 300), each embedded ROUNDS times (default 3) by each variant in turn, 1 thread
(``arms.fastembed.query_threads``). Prints p50/p10 of wall and of the calling thread's
CPU time (onnxruntime runs a 1-thread session on the calling thread, so CPU time is what
the machine's other load does not inflate), the median per-call CPU ratio to "before",
and whether every vector is the same bit for bit.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from octomem.plugins.fastembed.embedder import FastembedEmbedder, _bundled_onnx
from octomem.plugins.fastembed.query import QueryEncoder
from octomem.plugins.fastembed.requantize import requantized_path

DATA = Path(__file__).resolve().parents[4] / "shared" / "data" / "locomo" / "queries.jsonl"


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    data = DATA if DATA.is_file() else Path("/work/shared/data/locomo/queries.jsonl")
    texts = [json.loads(line)["text"] for line in data.open(encoding="utf-8")][:count]
    embedder = FastembedEmbedder()
    embedder.load()
    after = embedder._query
    assert after is not None and not embedder._optimize
    rq = requantized_path(_bundled_onnx()[1])
    before = QueryEncoder.open(rq, ["CPUExecutionProvider"], after.tokenizer, 1, False, True)
    variants = {"before (rq file, optimised at start)": before, "after (prepared graph)": after}
    same = all(np.array_equal(before.embed(t), after.embed(t)) for t in texts)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    for _ in range(rounds):
        for text in texts:
            for name, encoder in variants.items():
                wall, cpu = time.perf_counter_ns(), time.thread_time_ns()
                encoder.embed(text)
                times[name].append(((time.perf_counter_ns() - wall) / 1e6,
                                    (time.thread_time_ns() - cpu) / 1e6))
    tokens = [len(after.tokenizer.encode(t).ids) for t in texts]
    print(f"{len(texts)} questions x {rounds} rounds, tokens p50 {np.median(tokens):.0f} "
          f"(with [CLS]/[SEP]); load average {os.getloadavg()[0]:.2f}; "
          f"bit-identical vectors: {same}")
    base = np.array(times[next(iter(variants))])
    print("| variant | wall p50 ms | wall p10 ms | CPU p50 ms | CPU p10 ms | CPU ratio |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, rows in times.items():
        r = np.array(rows)
        print(f"| {name} | {np.median(r[:, 0]):.2f} | {np.percentile(r[:, 0], 10):.2f} | "
              f"{np.median(r[:, 1]):.2f} | {np.percentile(r[:, 1], 10):.2f} | "
              f"{np.median(r[:, 1] / base[:, 1]):.3f} |")


if __name__ == "__main__":
    main()
