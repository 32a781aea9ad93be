"""Where a recall's time goes besides the query's embedding (issue 12, latency.md, fourth
round): the calling thread's CPU per stage, and a timeline of one recall's threads.

Ingests one LoCoMo conversation as a chat transcript into a temporary store (as
``octomem.benchmarks.conversation_latency`` does), warms it, then asks each of the
conversation's questions twice through ``Memory.recall(top_k=10, count=False)``:

- ``stages``: the query vectors are embedded once beforehand and handed back at once
  (the embedder's cost is out), each stage of ``engine/memory/recall.py`` (and the
  reranker's and the vector arm's parts) is wrapped with ``time.thread_time``, and the
  p50 of each is printed with the recall's own calling-thread CPU;
- ``timeline``: the real embedding; when the worker's embedding starts and ends, when
  the keyword arm ends, when the calling thread has the vector, when each later stage
  starts, as milliseconds from the recall's start (p50 of each).

Run from the repository root::

    nice -n 5 python benchmarks/results/conversations/recall_stages.py \\
        /work/shared/data/locomo conv-26 stages
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from octomem.benchmarks.conversation_latency import _chat
from octomem.engine.memory import recall as R
from octomem.engine.memory.facade import open_memory

STAGES = ("_keywords", "_search", "fuse_scopes", "_materialise", "order_documents",
          "_vectors", "similarities", "rerank_stage", "_dedup", "scope_stats", "judged")
TIMELINE = ("_embedded", "_keywords", "_embedding", "fuse_scopes", "rerank_stage", "judged")


def _wrap(obj: Any, name: str, record: Any) -> None:
    fn = getattr(obj, name)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        record(name, True)
        try:
            return fn(*args, **kwargs)
        finally:
            record(name, False)

    setattr(obj, name, wrapped)


def main(folder: str, conversation: str, mode: str) -> None:
    """Print the stage table or the timeline (see the module docstring)."""
    with tempfile.TemporaryDirectory() as tmp:
        chat = Path(tmp) / f"{conversation}.jsonl"
        _, questions = _chat(folder, conversation, chat)
        memory = open_memory(overrides={"data_dir": str(Path(tmp) / "data")},
                             project_root=Path(tmp))
        memory.ingest(str(chat), scope="global")
        pipeline = memory.scopes.require("global")
        pipeline.warm()
        cpu: dict[str, list[float]] = defaultdict(list)
        marks: dict[str, float] = {}
        started: dict[str, float] = {}
        if mode == "stages":
            embedder = pipeline.arms.embedder
            vectors = {q: embedder.embed_query(q) for q in questions}

            class Ready:  # the embedder, but each question's vector is ready
                def __getattr__(self, name: str) -> Any:
                    return getattr(embedder, name)

                def embed_query(self, text: str) -> Any:
                    return vectors[text]

            object.__setattr__(pipeline.arms, "embedder", Ready())

            def record(name: str, start: bool) -> None:
                if start:
                    started[name] = time.thread_time()
                else:
                    cpu[name].append((time.thread_time() - started.pop(name)) * 1e3)

            for name in STAGES:
                _wrap(R, name, record)
            arms = pipeline.arms
            for obj, names in ((arms.semantic, ("search", "vectors")),
                               (arms.reranker, ("rerank_hits", "groups"))):
                for name in names if obj is not None else ():
                    _wrap(obj, name, lambda n, s, o=obj: record(f"{o.name}.{n}", s))
        else:
            def record(name: str, start: bool) -> None:
                marks[name + (" starts" if start else " ends")] = time.perf_counter()

            for name in TIMELINE:
                _wrap(R, name, record)
        for q in questions[:20]:  # warm-up
            memory.recall(q, scope="global", top_k=10, count=False)
        cpu.clear()
        rows, total = [], []
        for _ in range(2):
            for q in questions:
                marks.clear()
                t0, c0 = time.perf_counter(), time.thread_time()
                memory.recall(q, scope="global", top_k=10, count=False)
                end = time.perf_counter()
                total.append((time.thread_time() - c0) * 1e3)
                rows.append({k: (v - t0) * 1e3 for k, v in marks.items()} | {
                    "recall ends": (end - t0) * 1e3})
        memory.close()
    print(f"{mode}: load average {os.getloadavg()}, calling thread CPU per recall p50 "
          f"{statistics.median(total):.3f} ms")
    if mode == "stages":
        for name, values in sorted(cpu.items(), key=lambda kv: -statistics.median(kv[1])):
            print(f"  {name:28} p50 {statistics.median(values):.3f} ms CPU")
    else:
        for key in sorted(rows[0], key=lambda k: statistics.median(r[k] for r in rows)):
            print(f"  {key:24} p50 {statistics.median(r[key] for r in rows):7.3f} ms")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "stages")
