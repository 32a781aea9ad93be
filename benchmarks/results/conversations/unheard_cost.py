"""What counting a question's unheard words costs a recall (issue 12, docs/benchmarks.md,
"Unheard words").

Ingests one LoCoMo conversation as a chat transcript into a temporary store (as
``octomem.benchmarks.conversation_latency`` does), warms it, then asks each of the
conversation's questions twice through ``Memory.recall(top_k=10, count=False)``, with
``octomem.engine.memory.judge.unheard`` wrapped in a timer; prints, for the second pass,
the recall's wall p50 and the unheard count's p50 / p95 / mean in milliseconds, and the
load average before and after.

Run from the repository root::

    nice -n 5 python benchmarks/results/conversations/unheard_cost.py \\
        /work/shared/data/locomo conv-26
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

import octomem.engine.memory.judge as judge
from octomem.benchmarks.conversation_latency import _chat
from octomem.engine.memory.facade import open_memory


def main(folder: str, conversation: str) -> None:
    """Measure and print one JSON line (see the module docstring)."""
    spent: list[float] = []
    unwrapped = judge.unheard

    def timed(*args: Any, **kwargs: Any) -> int:
        start = time.perf_counter()
        found = unwrapped(*args, **kwargs)
        spent.append((time.perf_counter() - start) * 1e3)
        return found

    judge.unheard = timed  # type: ignore[assignment]
    load = os.getloadavg()
    walls: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        chat = Path(tmp) / "chat.jsonl"
        turns, questions = _chat(folder, conversation, chat)
        memory = open_memory(overrides={"data_dir": str(Path(tmp) / "data")},
                             project_root=Path(tmp))
        memory.ingest(str(chat), scope="global")
        memory.scopes.require("global").warm()
        for _ in range(2):  # the first pass warms; the second is timed
            spent.clear()
            walls.clear()
            for question in questions:
                start = time.perf_counter()
                memory.recall(question, scope="global", top_k=10, count=False)
                walls.append((time.perf_counter() - start) * 1e3)
        memory.close()
    print(json.dumps({
        "conversation": conversation, "turns": turns, "questions": len(questions),
        "recall_wall_p50_ms": round(float(np.percentile(walls, 50)), 2),
        "unheard_p50_ms": round(float(np.percentile(spent, 50)), 3),
        "unheard_p95_ms": round(float(np.percentile(spent, 95)), 3),
        "unheard_mean_ms": round(float(np.mean(spent)), 3),
        "load_before": [round(x, 2) for x in load],
        "load_after": [round(x, 2) for x in os.getloadavg()]}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
