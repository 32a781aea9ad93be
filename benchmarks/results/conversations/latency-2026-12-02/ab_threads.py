"""Where a recall embeds its query, in one process on the same store (issue 12, latency):
LoCoMo conv-26 ingested as a transcript (as ``octomem.benchmarks.conversation_latency``
does), then each question recalled once per variant per pass, the order alternating
question by question (``Memory.recall(top_k=10, count=False)``, real embedding):

- ``worker``: the query embedded on a worker while the keyword arm searches on the
  calling thread (the recall before this round; forced by hiding the embedder's
  ``query_job``);
- ``here``: the query tokenized on the calling thread, the keyword arm started on a
  worker, then the ONNX run (no GIL held) and pooling on the calling thread.

Prints p50 / p25 wall, process CPU and calling-thread CPU per variant, the ratio of the
p50s and the median of the paired wall ratios, the load before and after, and checks
that every pair of answers holds the same hits.

Run from the repository root::

    nice -n 5 python benchmarks/results/conversations/latency-2026-12-02/ab_threads.py \\
        /work/shared/data/locomo conv-26 2
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from octomem.benchmarks.conversation_latency import _chat
from octomem.engine.memory.facade import open_memory


def main(folder: str, conversation: str, passes: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        chat = Path(tmp) / f"{conversation}.jsonl"
        _, questions = _chat(folder, conversation, chat)
        memory = open_memory(overrides={"data_dir": str(Path(tmp) / "data")},
                             project_root=Path(tmp))
        memory.ingest(str(chat), scope="global")
        pipeline = memory.scopes.require("global")
        pipeline.warm()
        embedder = pipeline.arms.embedder
        job = embedder.query_job

        def use(variant: str) -> None:
            if variant == "worker":
                embedder.query_job = None  # not callable: the embedding goes to a worker
            else:
                embedder.query_job = job

        wall: dict[str, list[float]] = {"worker": [], "here": []}
        cpu: dict[str, list[float]] = {"worker": [], "here": []}
        own: dict[str, list[float]] = {"worker": [], "here": []}
        for q in questions[:20]:  # warm-up, both
            for variant in wall:
                use(variant)
                memory.recall(q, scope="global", top_k=10, count=False)
        load = [os.getloadavg()]
        for p in range(passes):
            for i, q in enumerate(questions):
                order = ["worker", "here"] if (i + p) % 2 == 0 else ["here", "worker"]
                seen = []
                for variant in order:
                    use(variant)
                    t0, c0, m0 = time.perf_counter(), time.process_time(), time.thread_time()
                    answer = memory.recall(q, scope="global", top_k=10, count=False)
                    wall[variant].append((time.perf_counter() - t0) * 1e3)
                    cpu[variant].append((time.process_time() - c0) * 1e3)
                    own[variant].append((time.thread_time() - m0) * 1e3)
                    seen.append([(h.chunk.id, h.rank, h.relevance) for h in answer.hits])
                assert seen[0] == seen[1], q
        load.append(os.getloadavg())
        use("here")
        memory.close()
    print(f"{len(wall['here'])} recalls each, load {load[0]} -> {load[1]}, same hits in every pair")
    for variant in wall:
        print(f"  {variant:6} wall p50 {statistics.median(wall[variant]):6.2f} ms "
              f"(p25 {statistics.quantiles(wall[variant], n=4)[0]:6.2f}), process CPU p50 "
              f"{statistics.median(cpu[variant]):5.2f}, calling thread "
              f"{statistics.median(own[variant]):5.2f} ms")
    ratio = statistics.median(wall["here"]) / statistics.median(wall["worker"])
    paired = statistics.median(h / w for h, w in zip(wall["here"], wall["worker"], strict=True))
    print(f"  here / worker: wall p50 {ratio:.3f}, median of paired ratios {paired:.3f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 2)
