"""Recall latency on a store holding one conversation, end to end, query embedding included.

``python -m octomem.benchmarks.conversation_latency ../shared/data/locomo conv-26``:
writes the conversation's turns as a chat JSON Lines transcript in a temporary folder,
ingests it through ``Memory.ingest`` with the packaged defaults (MiniLM, fts5,
sqlite-vec, the ``conversation`` reranker), warms the arms as the MCP server does, then
times ``Memory.recall`` (``count=False``, top_k 10) for each of the conversation's
questions, twice, and prints p50/p95 of the second pass with the load average.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from octomem.engine.memory.facade import open_memory


def main(folder: str, conversation: str) -> None:
    """Measure and print (see the module docstring)."""
    rows = [json.loads(line) for line in open(Path(folder) / "corpus.jsonl", encoding="utf-8")]
    turns = [r for r in rows if r["metadata"].get("conv_id") == conversation]
    questions = [json.loads(line)["text"] for line in open(Path(folder) / "queries.jsonl",
                                                              encoding="utf-8")
                 if json.loads(line)["metadata"].get("conv_id") == conversation]
    with tempfile.TemporaryDirectory() as tmp:
        chat = Path(tmp) / f"{conversation}.jsonl"
        chat.write_text("".join(json.dumps({
            "session": str(r["metadata"]["session"]), "speaker": r["metadata"]["speaker"],
            "text": r["text"].split(": ", 1)[1], "time": r["title"]}) + "\n" for r in turns),
            encoding="utf-8")
        memory = open_memory(overrides={"data_dir": str(Path(tmp) / "data")},
                             project_root=Path(tmp))
        start = time.perf_counter()
        memory.ingest(str(chat), scope="global")
        ingest_s = time.perf_counter() - start
        memory.scopes.require("global").warm()
        times = []
        for rep in range(2):
            for q in questions:
                t0 = time.perf_counter()
                memory.recall(q, scope="global", top_k=10, count=False)
                if rep:
                    times.append((time.perf_counter() - t0) * 1e3)
        memory.close()
    print(json.dumps({
        "conversation": conversation, "turns": len(turns), "questions": len(questions),
        "ingest_s": round(ingest_s, 1), "recall_p50_ms": round(float(np.percentile(times, 50)), 2),
        "recall_p95_ms": round(float(np.percentile(times, 95)), 2),
        "load_1m": round(os.getloadavg()[0], 2), "cpus": os.cpu_count(),
    }))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
