"""Collect answers (top 10, floors 0) with every hit's text and relevance parts, tune only.

python collect.py full|session CACHE_ENTRY FOLDER SPLIT metadata.FIELD ONLY OUT.pkl
"""
from __future__ import annotations

import pickle
import sys
from pathlib import Path
from typing import Any

from octomem.benchmarks.fit_turn_relevance import collect, collect_small
from octomem.engine.memory.recall import RecallRequest, recall_scopes
from octomem.engine.memory.scopes import memory_knobs
from octomem.engine.pipeline import embedding_text
from octomem.engine.relevance import JUDGED_HITS


def ask(pipeline: Any, model: Any, text: str, filters: Any, judged: dict[str, int],
        own: bool, reach: int | None = None) -> dict[str, Any]:
    answer = recall_scopes([("local", pipeline)],
                           RecallRequest(text, JUDGED_HITS, filters, "chunk", False),
                           memory_knobs(pipeline.settings))
    hits = []
    for h in answer.hits[:JUDGED_HITS]:
        r = h.relevance
        md = h.chunk.metadata or {}
        hits.append(dict(doc=h.chunk.document_id, judged=judged.get(h.chunk.document_id, 0),
                         text=embedding_text(h.chunk), raw=h.chunk.text, role=md.get("role"),
                         prob=None if r is None else r.probability,
                         cos=None if r is None else r.cos, cov=None if r is None else r.coverage,
                         unheard=None if r is None else r.unheard,
                         reach=None if r is None else r.reach,
                         aside=None if r is None else r.aside))
    return dict(query=text, filters=dict(filters.metadata), own=own, reach=reach,
                evidence=any(x["judged"] > 0 for x in hits), hits=hits)


if __name__ == "__main__":
    kind, root, folder, split, group_by, only, out = sys.argv[1:8]
    wanted = {g for g in only.split(",") if g}
    if kind == "full":
        rows = collect(Path(root), Path(folder), split, group_by, wanted, ask=ask)
    else:
        rows = collect_small(Path(root), Path(folder), split, group_by, wanted,
                             speaker=kind == "speaker", ask=ask)
    Path(out).write_bytes(pickle.dumps(rows))
    print(kind, len(rows), "answers")
