"""``octomem bench --limit N``: a smoke run that builds only what its queries can need.

Evaluating the first N queries against an index of the whole corpus still paid for
embedding every document (SciFact: ~55 min on a loaded 2-core machine). A smoke run
indexes a subset instead: every document judged for the kept queries (their qrels), plus
:data:`SAMPLE_DOCUMENTS` others drawn at random with a fixed seed, so the ranking still
has distractors to get wrong. With ``--group-by`` (each query sees only its own group,
e.g. one LoCoMo conversation), the others are drawn from the kept queries' groups only:
documents of other groups could never be a candidate. The subset is part of the cache
key (a smoke index never serves a full run) and the report says what it held. Its
numbers are not comparable with a full run's: fewer distractors make every row look
better.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
from typing import Any

from octomem.engine.types import Filters

from .dataset import BeirDataset, parse_group_by

#: Documents drawn at random beside the judged ones: enough distractors that ranking is
#: not trivial, few enough that building with MiniLM takes about a minute on 2 cores
#: (~30 passages/s). Chosen for run time, not on any quality number.
SAMPLE_DOCUMENTS = 1000
#: Seed of the draw, so two smoke runs of the same queries build the same index.
SAMPLE_SEED = 0


def _corpus_rows(dataset: BeirDataset) -> list[tuple[str, dict[str, Any]]]:
    """Return ``(_id, metadata)`` of every corpus row, in file order."""
    rows = []
    with dataset.corpus_path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                row = json.loads(line)
                rows.append((str(row.get("_id")), row.get("metadata") or {}))
    return rows


def smoke_subset(dataset: BeirDataset, filters: dict[str, Filters],
                 sample: int | None = None, seed: int = SAMPLE_SEED) -> dict[str, Any]:
    """Return the documents a smoke run indexes, and how they were chosen.

    :param filters: each kept query's filters (their metadata equality names its group).
    :param sample: documents to draw beside the judged ones (default
        :data:`SAMPLE_DOCUMENTS`).
    :returns: ``{"ids": sorted ids, "judged": n, "sampled": n, "corpus": n, "seed": s,
        "sha256": hex digest of the ids}``.
    """
    rows = _corpus_rows(dataset)
    present = {doc_id for doc_id, _ in rows}
    judged = {d for rels in dataset.qrels.values() for d in rels} & present
    groups = {(k, str(v)) for f in filters.values() for k, v in (f.metadata or {}).items()}
    candidates = [doc_id for doc_id, meta in rows if doc_id not in judged and (
        not groups or any(str(meta.get(k)) == v for k, v in groups))]
    wanted = SAMPLE_DOCUMENTS if sample is None else sample
    drawn = random.Random(seed).sample(candidates, min(wanted, len(candidates)))
    ids = sorted(judged | set(drawn))
    digest = hashlib.sha256("\n".join(ids).encode()).hexdigest()
    return {"ids": ids, "judged": len(judged), "sampled": len(drawn), "corpus": len(rows),
            "seed": seed, "grouped": bool(groups), "sha256": digest}


def held_groups(dataset: BeirDataset, group_by: str | None) -> set[str] | None:
    """Return the ``group_by`` values of the documents a smoke index holds (``None``: not
    a smoke run, every group is held), for the abstention pass to ask only those."""
    subset = dataset.extra.get("subset")
    if subset is None or not group_by:
        return None
    field = parse_group_by(group_by)
    ids = set(subset["ids"])
    return {str(meta.get(field)) for doc_id, meta in _corpus_rows(dataset) if doc_id in ids}


def with_subset(dataset: BeirDataset, subset: dict[str, Any]) -> BeirDataset:
    """Return ``dataset`` marked to index only ``subset`` (see :func:`smoke_subset`)."""
    return dataclasses.replace(dataset, extra={**dataset.extra, "subset": subset})


def describe(subset: dict[str, Any]) -> str:
    """Say in one line what a smoke index holds."""
    where = " of their groups" if subset["grouped"] else ""
    return (f"index built from {subset['judged'] + subset['sampled']:,} of "
            f"{subset['corpus']:,} documents: the {subset['judged']:,} judged for these "
            f"queries and {subset['sampled']:,} drawn at random{where} (seed "
            f"{subset['seed']}); not comparable with a full run")
