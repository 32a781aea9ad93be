"""Time the rerank stage on conv-26's recalls, main's ``one_place_per_turn`` against this
branch's, alternated in one process (so both see the same load).

``python rerank_ab.py ../shared/data/locomo STORE_DIR``: ingests conv-26 as a chat
transcript into STORE_DIR once (as ``octomem.benchmarks.conversation_latency`` does),
records the arguments of ``engine.rerank.rerank`` for each of its 199 questions asked
through ``Memory.recall`` (top_k 10), then times ``rerank`` over those calls 15 times per
variant, alternating which goes first, and prints both medians, their ratio and the load.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

import octomem.engine.rerank as stage
from octomem.benchmarks.conversation_latency import _chat
from octomem.engine.memory.facade import open_memory

BRANCH = stage.one_place_per_turn
#: The commit this branch started from.
MAIN = "ef5eee4"


def main_one_place_per_turn() -> Any:
    """Return main ``ef5eee4``'s ``one_place_per_turn``, read from git (this file's
    repository) and run in the ``octomem.engine`` package."""
    source = subprocess.run(["git", "show", f"{MAIN}:engine/rerank.py"], check=True,
                            capture_output=True, text=True, cwd=Path(__file__).parent).stdout
    namespace: dict[str, Any] = {"__name__": "octomem.engine.rerank_main",
                                 "__package__": "octomem.engine"}
    exec(compile(source, f"{MAIN}:engine/rerank.py", "exec"), namespace)
    return namespace["one_place_per_turn"]


def record(folder: str, root: Path) -> list[tuple]:
    """Return the rerank stage's arguments of each conv-26 recall (ingesting it once)."""
    root.mkdir(parents=True, exist_ok=True)
    _, questions = _chat(folder, "conv-26", root / "conv-26.jsonl")
    fresh = not (root / "data").exists()
    memory = open_memory(overrides={"data_dir": str(root / "data")}, project_root=root)
    if fresh:
        memory.ingest(str(root / "conv-26.jsonl"), scope="global")
    memory.scopes.require("global").warm()
    calls: list[tuple] = []
    real = stage.rerank

    def kept(*args: Any) -> Any:
        calls.append(args)
        return real(*args)

    stage.rerank = kept  # type: ignore[assignment]
    for question in questions:
        memory.recall(question, scope="global", top_k=10, count=False)
    stage.rerank = real
    return calls


def main() -> None:
    calls = record(sys.argv[1], Path(sys.argv[2]))
    times: dict[str, list[float]] = {"main": [], "branch": []}
    variants = (("main", main_one_place_per_turn()), ("branch", BRANCH))
    for round_ in range(15):
        for name, function in variants if round_ % 2 else variants[::-1]:
            stage.one_place_per_turn = function
            start = time.perf_counter()
            for args in calls:
                stage.rerank(*args)
            times[name].append((time.perf_counter() - start) / len(calls) * 1e3)
    before, after = np.median(times["main"]), np.median(times["branch"])
    print(f"rerank stage, ms per recall, median of 15: main {before:.3f}, branch {after:.3f}, "
          f"ratio {after / before:.3f} ({len(calls)} recalls); load {os.getloadavg()}")


if __name__ == "__main__":
    main()
