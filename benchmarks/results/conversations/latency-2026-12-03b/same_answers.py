"""Dump every recall answer of the LoCoMo tune conversations and some LongMemEval tune
questions, so two commits' answers can be compared exactly (``compare_answers.py``).

``python same_answers.py OUT.json [N_LME]`` (data folder: ``$OCTOMEM_DATA``, default
``../shared/data``): each LoCoMo tune conversation (conv-26/30/41/42/43) and each of the
first ``N_LME`` (default 6) LongMemEval ``--split tune`` questions' haystacks is written
as a chat transcript, ingested into a fresh store with the packaged defaults, warmed as
the MCP server does, and every one of its questions is asked through ``Memory.recall``
(top_k 10, ``count=False``) twice: cold caches, then warm. Each answer is written whole
(hits with chunk, scores, recency, relevance, contributions; collapsed; abstention),
floats as ``repr``, without ``timings_ms``. Never a report split.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from octomem.engine.memory.facade import open_memory

DATA = Path(os.environ.get("OCTOMEM_DATA", "../shared/data"))
TUNE = ("conv-26", "conv-30", "conv-41", "conv-42", "conv-43")


def rows(path: Path) -> list[dict[str, Any]]:
    """Return a JSON Lines file's objects."""
    return [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]


def plain(x: Any) -> Any:
    """Return ``x`` as JSON: dataclasses as dicts (no ``timings_ms``), floats as ``repr``."""
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: plain(getattr(x, f.name)) for f in dataclasses.fields(x)
                if f.name != "timings_ms"}
    if isinstance(x, dict):
        return {repr(k): plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if isinstance(x, float):
        return repr(x)
    return x if isinstance(x, (int, str, bool, type(None))) else repr(x)


def ask(group: str, turns: list[dict[str, Any]], questions: list[tuple[str, str]],
        out: dict[str, Any]) -> None:
    """Ingest ``turns`` into a fresh store; record each question's answer twice."""
    with tempfile.TemporaryDirectory() as tmp:
        chat = Path(tmp) / "c.jsonl"
        chat.write_text("".join(json.dumps({
            "session": str(r["metadata"]["session"]), "speaker": r["metadata"]["speaker"],
            "text": r["text"].split(": ", 1)[1], "time": r["title"]}) + "\n" for r in turns),
            encoding="utf-8")
        memory = open_memory(overrides={"data_dir": str(Path(tmp) / "data")},
                             project_root=Path(tmp))
        memory.ingest(str(chat), scope="global")
        memory.scopes.require("global").warm()
        for rep in range(2):
            for qid, text in questions:
                answer = memory.recall(text, scope="global", top_k=10, count=False)
                out[f"{group}|{qid}|{rep}"] = plain(answer)
        memory.close()


def main(path: str, n_lme: int) -> None:
    """Write the answers to ``path``."""
    out: dict[str, Any] = {}
    corpus, queries = rows(DATA / "locomo/corpus.jsonl"), rows(DATA / "locomo/queries.jsonl")
    for conv in TUNE:
        ask(conv, [r for r in corpus if r["metadata"].get("conv_id") == conv],
            [(q["_id"], q["text"]) for q in queries if q["metadata"].get("conv_id") == conv],
            out)
    corpus = rows(DATA / "longmemeval/corpus.jsonl")
    tune = [q for q in rows(DATA / "longmemeval/queries.jsonl")
            if q["metadata"].get("split") == "tune"]
    for q in tune[:n_lme]:
        ask("lme-" + q["_id"], [r for r in corpus if r["metadata"].get("qid") == q["_id"]],
            [(q["_id"], q["text"])], out)
    Path(path).write_text(json.dumps(out, sort_keys=True, indent=0))
    print("answers", len(out))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 6)
