"""Calling-thread CPU per recall stage on conv-26 (``python stage_times.py``, from a
checkout with its venv; data under ``$OCTOMEM_DATA``, default ``../shared/data``).

Ingests conv-26 as ``octomem.benchmarks.conversation_latency`` does, asks its 199
questions once to warm, then twice more with each stage wrapped in a ``time.thread_time``
counter, and prints the process CPU per recall and each stage's calling-thread CPU per
recall (stages nest: ``rerank_stage`` holds ``rerank_grouped`` holds ``word_columns``;
``embedding`` is the query's ONNX run, on the calling thread).
"""

from __future__ import annotations

import functools
import importlib
import os
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from octomem.benchmarks.conversation_latency import _chat
from octomem.engine.memory.facade import open_memory

SPENT: dict[str, float] = defaultdict(float)
CALLS: dict[str, int] = defaultdict(int)
RECALL = "octomem.engine.memory.recall"
RANKER = "octomem.plugins.conversation.ranker"
STAGES = [(RECALL, f, None) for f in (
    "start_embedding", "keyword_runs", "embedding", "search_scopes", "fuse_scopes",
    "_materialise", "order_documents", "_vectors", "similarities", "rerank_stage", "_dedup",
    "order_values", "judged")] + [
    (RANKER, f, None) for f in ("word_columns", "turn_features", "held_terms", "standardised")
] + [(RANKER, f, "ConversationReranker") for f in ("known_all", "rerank_grouped")] + [
    ("octomem.plugins.conversation.features", "of_rows", "TurnColumns")]


def wrap(module: str, name: str, owner: str | None) -> None:
    """Count the calling-thread CPU of ``module.[owner.]name``."""
    target: Any = importlib.import_module(module)
    if owner:
        target = getattr(target, owner)
    inner = getattr(target, name)
    label = f"{owner or module.rsplit('.', 1)[-1]}.{name}"

    @functools.wraps(inner)
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.thread_time()
        try:
            return inner(*args, **kwargs)
        finally:
            SPENT[label] += time.thread_time() - start
            CALLS[label] += 1

    setattr(target, name, timed)


def main() -> None:
    """Measure and print."""
    for stage in STAGES:
        wrap(*stage)
    tmp = tempfile.mkdtemp()
    chat = Path(tmp) / "c.jsonl"
    _, questions = _chat(os.environ.get("OCTOMEM_DATA", "../shared/data") + "/locomo",
                         "conv-26", chat)
    memory = open_memory(overrides={"data_dir": str(Path(tmp) / "data")},
                         project_root=Path(tmp))
    memory.ingest(str(chat), scope="global")
    memory.scopes.require("global").warm()
    for q in questions:
        memory.recall(q, scope="global", top_k=10, count=False)
    SPENT.clear()
    CALLS.clear()
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(2):
        for q in questions:
            memory.recall(q, scope="global", top_k=10, count=False)
    n = 2 * len(questions)
    print(f"wall {(time.perf_counter() - wall) * 1e3 / n:.2f} ms/q  "
          f"cpu {(time.process_time() - cpu) * 1e3 / n:.2f} ms/q")
    for label, spent in sorted(SPENT.items(), key=lambda item: -item[1]):
        print(f"{spent * 1e3 / n:7.3f} ms  {CALLS[label] / n:5.1f}x  {label}")


if __name__ == "__main__":
    main()
