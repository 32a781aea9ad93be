"""Recall latency on a store holding one conversation, end to end, query embedding included.

``python -m octomem.benchmarks.conversation_latency ../shared/data/locomo conv-26``:
writes the conversation's turns as a chat JSON Lines transcript in a temporary folder,
ingests it through ``Memory.ingest`` with the packaged defaults (MiniLM, fts5,
sqlite-vec, the ``conversation`` reranker), opens the same store a second time with
``pipeline.reranker`` empty, warms both as the MCP server does, then times
``Memory.recall`` (``count=False``, top_k 10) for each of the conversation's questions
on both, interleaved (one question on one, then on the other), twice. Prints p50/p95
of the second pass: wall time, the process's CPU time (all threads: onnxruntime's and
the keyword arm's worker included) and the calling thread's CPU time, per variant, the
wall ratio, and the load average before and after. On a shared machine the ratio and
the CPU times say more than the wall times.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from octomem.engine.memory.facade import Memory, open_memory

from .arguments import beir_folder, bench_parser, run_main

VARIANTS = ("default", "reranker_off")


def _chat(folder: str, conversation: str, into: Path) -> tuple[int, list[str]]:
    """Write the conversation's transcript to ``into``; return its turn count and questions."""
    rows = [json.loads(line) for line in open(Path(folder) / "corpus.jsonl", encoding="utf-8")]
    turns = [r for r in rows if r["metadata"].get("conv_id") == conversation]
    queries = [json.loads(line) for line in open(Path(folder) / "queries.jsonl",
                                                  encoding="utf-8")]
    questions = [q["text"] for q in queries if q["metadata"].get("conv_id") == conversation]
    into.write_text("".join(json.dumps({
        "session": str(r["metadata"]["session"]), "speaker": r["metadata"]["speaker"],
        "text": r["text"].split(": ", 1)[1], "time": r["title"]}) + "\n" for r in turns),
        encoding="utf-8")
    return len(turns), questions


def conversations(folder: Path) -> list[str]:
    """Return the ``conv_id`` of every conversation in ``folder``'s corpus, sorted."""
    with open(folder / "corpus.jsonl", encoding="utf-8") as rows:
        found = {json.loads(line)["metadata"].get("conv_id") for line in rows if line.strip()}
    return sorted(c for c in found if c)


def _stats(values: list[float]) -> dict[str, float]:
    return {"p50": round(float(np.percentile(values, 50)), 2),
            "p95": round(float(np.percentile(values, 95)), 2)}


def measure(folder: str, conversation: str) -> dict[str, Any]:
    """Measure and print (see the module docstring); returns what it printed."""
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        chat = Path(tmp) / f"{conversation}.jsonl"
        count, questions = _chat(folder, conversation, chat)
        data = {"data_dir": str(Path(tmp) / "data")}
        memories: dict[str, Memory] = {
            "default": open_memory(overrides=data, project_root=Path(tmp))}
        start = time.perf_counter()
        memories["default"].ingest(str(chat), scope="global")
        ingest_s = time.perf_counter() - start
        memories["reranker_off"] = open_memory(
            overrides={**data, "pipeline": {"reranker": None}}, project_root=Path(tmp))
        wall: dict[str, list[float]] = {v: [] for v in VARIANTS}
        cpu: dict[str, list[float]] = {v: [] for v in VARIANTS}
        main_cpu: dict[str, list[float]] = {v: [] for v in VARIANTS}
        for memory in memories.values():
            memory.scopes.require("global").warm()
        for rep in range(2):
            for q in questions:
                for variant, memory in memories.items():
                    t0, c0, m0 = time.perf_counter(), time.process_time(), time.thread_time()
                    memory.recall(q, scope="global", top_k=10, count=False)
                    if rep:
                        wall[variant].append((time.perf_counter() - t0) * 1e3)
                        cpu[variant].append((time.process_time() - c0) * 1e3)
                        main_cpu[variant].append((time.thread_time() - m0) * 1e3)
        for memory in memories.values():
            memory.close()
    out = {
        "conversation": conversation, "turns": count, "questions": len(questions),
        "ingest_s": round(ingest_s, 1),
        **{f"{v}_wall_ms": _stats(wall[v]) for v in VARIANTS},
        **{f"{v}_cpu_ms": _stats(cpu[v]) for v in VARIANTS},
        **{f"{v}_calling_thread_cpu_ms": _stats(main_cpu[v]) for v in VARIANTS},
        "wall_p50_ratio_default_to_off": round(
            float(np.percentile(wall["default"], 50) / np.percentile(wall["reranker_off"], 50)),
            3),
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count(),
    }
    print(json.dumps(out))
    return out


def main(argv: list[str] | None = None) -> None:
    """Parse the command line (a LoCoMo-style BEIR folder, a conversation id), measure."""
    parser = bench_parser("conversation_latency", __doc__)
    parser.add_argument("dataset", type=beir_folder,
                        help="a BEIR folder whose turns carry metadata.conv_id, session and "
                             "speaker, e.g. ../shared/data/locomo")
    parser.add_argument("conversation", help="the conversation to measure, e.g. conv-26")
    args = parser.parse_args(argv)
    known = conversations(args.dataset)
    if args.conversation not in known:
        shown = ", ".join(known[:12]) + (", ..." if len(known) > 12 else "")
        parser.error(f"conversation: {args.conversation!r} is not in "
                     f"{args.dataset / 'corpus.jsonl'} (its conversations: {shown or 'none'})")
    measure(str(args.dataset), args.conversation)


if __name__ == "__main__":
    run_main(main, "python -m octomem.benchmarks.conversation_latency")
