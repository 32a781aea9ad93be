"""Write each abstention-pass recall of ``octomem bench --abstention`` (query, filters,
whether it abstained, its hits with their relevance) to a JSON Lines file."""

from __future__ import annotations

import json
from typing import Any


def install(path: str) -> None:
    """Replace ``benchmarks.subsets._ids`` by the same recall, also appending a line to
    ``path`` (the CLI ends with ``os._exit``: written per recall, not at exit)."""
    from octomem.benchmarks import subsets
    from octomem.engine.memory.recall import RecallRequest, recall_scopes
    from octomem.engine.memory.scopes import memory_knobs

    def ids(pipeline: Any, text: str, filters: Any) -> list[str]:
        request = RecallRequest(text, subsets.ABSTENTION_TOP_K, filters, "chunk", False)
        answer = recall_scopes([("local", pipeline)], request, memory_knobs(pipeline.settings))
        rejected = answer.best_rejected
        line = {"text": text, "filters": repr(filters), "abstained": answer.abstained,
                "hits": [[h.chunk.document_id, h.chunk.ordinal,
                          None if h.relevance is None else h.relevance.probability]
                         for h in answer.hits],
                "best_rejected": None if rejected is None else [
                    rejected.chunk.document_id, rejected.chunk.ordinal,
                    None if rejected.relevance is None else rejected.relevance.probability]}
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line) + "\n")
        return list(dict.fromkeys(h.chunk.document_id for h in answer.hits))

    subsets._ids = ids
