"""Recall latency with and without neighbouring turns as candidates, on one conversation.

``python latency.py ../shared/data/locomo conv-26``: ingests the conversation as a chat
transcript with the packaged defaults (as ``octomem.benchmarks.conversation_latency``
does), opens the same store a second time with ``arms.conversation.neighbours = 0``,
warms both, asks every question of the conversation through ``recall`` (top_k 10,
``count=False``) on each, interleaved, three passes, and prints the p50/p95 wall and
process CPU times of the last two passes, their ratios and the load average.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from octomem.benchmarks.conversation_latency import _chat
from octomem.engine.memory.facade import open_memory


def main(folder: str, conversation: str) -> None:
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        chat = Path(tmp) / f"{conversation}.jsonl"
        _, questions = _chat(folder, conversation, chat)
        data = {"data_dir": str(Path(tmp) / "data")}
        memories = {"neighbours10": open_memory(overrides=data, project_root=Path(tmp))}
        memories["neighbours10"].ingest(str(chat), scope="global")
        memories["neighbours0"] = open_memory(
            overrides={**data, "arms": {"conversation": {"neighbours": 0}}},
            project_root=Path(tmp))
        for memory in memories.values():
            memory.scopes.require("global").warm()
        wall: dict[str, list[float]] = {k: [] for k in memories}
        cpu: dict[str, list[float]] = {k: [] for k in memories}
        for rep in range(3):
            for q in questions:
                for name, memory in memories.items():
                    t0, c0 = time.perf_counter(), time.process_time()
                    memory.recall(q, scope="global", top_k=10, count=False)
                    if rep:
                        wall[name].append((time.perf_counter() - t0) * 1e3)
                        cpu[name].append((time.process_time() - c0) * 1e3)
        for memory in memories.values():
            memory.close()
    out: dict[str, object] = {
        name: {"wall_p50": round(float(np.median(wall[name])), 2),
               "wall_p95": round(float(np.percentile(wall[name], 95)), 2),
               "cpu_p50": round(float(np.median(cpu[name])), 2)} for name in wall}
    for kind, values in (("wall", wall), ("cpu", cpu)):
        ratio = np.median(values["neighbours10"]) / np.median(values["neighbours0"])
        out[f"ratio_{kind}_p50"] = round(float(ratio), 3)
    out["questions"] = len(questions)
    out["load_before"] = [round(x, 2) for x in load]
    out["load_after"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
