"""Every recall answer of one stored conversation, dumped for an exact before/after check
(issue 12, latency): a copy of a store holding LoCoMo conv-26 (``STORE/data``, ingested
once; ``STORE/questions.json``: its 199 questions), the clock fixed (``time.time``, so the
recency bonus is the same in both runs), then ``Memory.recall(count=False)`` for each
question on the default pipeline and with ``pipeline.reranker`` empty (top 10, top 40,
top 10 per document, top 10 with one neighbouring turn and a 300-token budget) and with
sequential arms (top 10): every field of each answer but its timings, as ``repr``, to
``OUT``, and its sha256.

Run it with each checkout's package first on ``PYTHONPATH`` (a folder holding an
``octomem`` link to the checkout)::

    python benchmarks/results/conversations/latency-2026-12-02/dump.py STORE OUT
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

FIXED = 1_764_000_000.0


def main(store: Path, out: Path) -> None:
    time.time = lambda: FIXED  # before octomem reads the clock
    from octomem.engine.memory.facade import open_memory

    questions = json.loads((store / "questions.json").read_text(encoding="utf-8"))
    tmp = Path(tempfile.mkdtemp())
    shutil.copytree(store / "data", tmp / "data")
    rows = []
    shapes: list[dict[str, object]] = [
        {"top_k": 10}, {"top_k": 40}, {"top_k": 10, "per": "document"},
        {"top_k": 10, "context": 1, "max_tokens": 300}]
    for extra, asked in (({}, shapes), ({"pipeline": {"reranker": None}}, shapes),
                         ({"retrieval": {"parallel_arms": False}}, shapes[:1])):
        memory = open_memory(overrides={"data_dir": str(tmp / "data"), **extra},
                             project_root=tmp)
        memory.scopes.require("global").warm()
        for question in questions:
            for shape in asked:
                answer = memory.recall(question, scope="global", count=False, **shape)
                fields = getattr(answer, "__dataclass_fields__", {})
                rows.append(repr({k: getattr(answer, k) for k in fields if k != "timings_ms"}))
        memory.close()
    shutil.rmtree(tmp)
    text = "\n".join(rows)
    out.write_text(text, encoding="utf-8")
    print(f"{len(rows)} answers, sha256 {hashlib.sha256(text.encode()).hexdigest()[:16]}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
