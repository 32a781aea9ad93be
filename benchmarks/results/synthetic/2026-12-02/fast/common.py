"""Shared by the scripts in this folder: the curve's queries and its ``hybrid`` row's
pipeline opened on a curve cache entry."""

from __future__ import annotations

import json
from pathlib import Path

from octomem.benchmarks import baseline, synthetic_data
from octomem.benchmarks.combos import parse_combo
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Query

ROW = "hybrid=fts5+sqlite-vec+rrf+cosine"
SCIFACT = Path("/work/shared/data/scifact")


def claims(n: int) -> list[str]:
    """Return the first ``n`` SciFact test claims (the curve's queries)."""
    qids = {line.split("\t")[0]
            for line in (SCIFACT / "qrels/test.tsv").read_text().splitlines()[1:]}
    rows = map(json.loads, (SCIFACT / "queries.jsonl").read_text().splitlines())
    return [r["text"] for r in rows if r["_id"] in qids][:n]


def pipeline(root: Path, row: str = ROW) -> Pipeline:
    """Open ``row``'s pipeline on the cache entry ``root``, warmed as the runner warms
    it (:meth:`Pipeline.warm` and one query)."""
    registry = load_registry(extra_plugins=[baseline, synthetic_data])
    combo = parse_combo(row, registry, load_settings(None, {}).settings)
    pipe = Pipeline(load_settings(None, combo.settings_overrides()), registry, root)
    pipe.warm()
    pipe.search(Query(claims(1)[0], top_k=10))
    return pipe
