"""Choose the own-match floor of the ``conversation`` reranker on the tune splits, offline.

``python floor_variants.py locomo|lme VARIANT ...`` asks every tune question (LoCoMo
conv-26/30/41/42/43 of the bench cache's store, ``--group-by metadata.conv_id``;
LongMemEval ``--split tune``, ``--group-by metadata.qid``) through ``Pipeline.search`` at
top_k 100, as the bench's quality pass does, with the shipped floor
(``own_match.below_unmatched``) taken out and each variant's rule applied to the
reranker's scores instead; prints nDCG@10 and R@10 with paired t-tests against the first
variant, how many first hits moved, and each question whose nDCG@10 moved. Variants:

- ``base``: no floor (main before this change);
- ``A:M1``: turns holding none of the query's content words go below every one that does;
- ``A:M2``: ... none of its content words and no ``expansion`` word;
- ``A:M3@c``: ... nor a cosine to the query >= c;
- ``A:M4``: ... nor a ``prev_question`` (a reply to a question turn holding one): the
  shipped rule, ``own_match.own_match``;
- ``G:M2``: no floor; only the ``addressed`` bonus restricted to M2 turns.

Paths are this machine's (``/work/shared/data``, the bench cache ``/work/scratch/cache``).
"""
from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

import octomem.plugins.conversation.ranker as ranker
from octomem.benchmarks.dataset import load_dataset, query_filters
from octomem.benchmarks.runner import document_run
from octomem.benchmarks.subsets import filter_queries
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.relevance import content_words
from octomem.engine.settings import load_settings
from octomem.engine.types import Query
from octomem.plugins.conversation.features import FEATURES

EXPANSION, PREV_QUESTION = FEATURES.index("expansion"), FEATURES.index("prev_question")
SETS = {
    "locomo": ("/work/shared/data/locomo", "test", "metadata.conv_id",
               "metadata.conv_id=conv-26,conv-30,conv-41,conv-42,conv-43",
               "/work/scratch/cache/locomo-04811956f467/fastembed-e5e57a4ee405"),
    "lme": ("/work/shared/data/longmemeval", "tune", "metadata.qid", None,
            "/work/scratch/cache/longmemeval-98e8ec3bbe2f/fastembed-55eae6c615d3"),
}
RULE: dict[str, Any] = {"name": "base", "cos": 0.0}
COUNT = {"shifted": 0, "first_moved": 0}
RAW: dict[str, np.ndarray] = {}
_features, _rerank = ranker.turn_features, ranker.ConversationReranker.rerank_grouped
ranker.below_unmatched = lambda scores, matched: scores  # the shipped floor out: main


def _kept_features(*args: Any, **kwargs: Any) -> np.ndarray:
    RAW["raw"] = out = _features(*args, **kwargs)
    return out


def matched_of(self: Any, query: str, hits: Any, similarity: Any, how: str) -> tuple:
    """Return the turns' places among ``hits`` and which of them match, by rule ``how``."""
    every = self.known_all(hits)
    at = [i for i, f in enumerate(every) if f.turn is not None]
    terms = content_words(query)
    matched = np.array([bool(every[i].words & terms) for i in at])
    raw = RAW["raw"]
    if how in ("M2", "M3", "M4"):
        matched |= raw[:, EXPANSION] > 0
    if how == "M4":
        matched |= raw[:, PREV_QUESTION] > 0
    if how == "M3":
        cos = similarity[at] if similarity is not None else np.full(len(at), np.nan)
        matched |= np.nan_to_num(cos, nan=-1.0) >= RULE["cos"]
    return np.asarray(at), matched


def _addressed_only(self: Any, query: str, hits: Any, similarity: Any, keyword: Any,
                    how: str) -> tuple:
    bonus = self.options.addressed
    self.options.__dict__["addressed"] = 0.0
    try:
        scores, groups = _rerank(self, query, hits, similarity, keyword)
    finally:
        self.options.__dict__["addressed"] = bonus
    if bonus and ranker.recalls_assistant(query) and not np.all(np.isnan(scores)):
        at, matched = matched_of(self, query, hits, similarity, how)
        kinds = np.array([self.known(hits[i].chunk).row[3] for i in at])
        scores[at] += bonus * ((kinds == 2) & matched)
    return scores, groups


def _variant(self: Any, query: str, hits: Any, similarity: Any, keyword: Any) -> tuple:
    if RULE["name"] == "base":
        return _rerank(self, query, hits, similarity, keyword)
    rule, how = RULE["name"].split(":")
    if rule == "G":
        return _addressed_only(self, query, hits, similarity, keyword, how)
    scores, groups = _rerank(self, query, hits, similarity, keyword)
    if np.all(np.isnan(scores)):
        return scores, groups
    at, matched = matched_of(self, query, hits, similarity, how)
    if matched.any() and (~matched).any():
        mine = scores[at]
        shift = max(0.0, mine[~matched].max() - mine[matched].min()) + 1.0
        first = int(np.nanargmax(scores))
        mine[~matched] -= shift
        scores[at] = mine
        COUNT["shifted"] += 1
        COUNT["first_moved"] += int(np.nanargmax(scores) != first)
    return scores, groups


ranker.turn_features = _kept_features
ranker.ConversationReranker.rerank_grouped = _variant  # type: ignore[method-assign]


def ask(pipeline: Pipeline, dataset: Any, filters: Any) -> tuple:
    """Return nDCG@10, R@10 and the first document of each question (binary gains)."""
    ndcg, recall, first = [], [], []
    for qid, text in dataset.queries.items():
        run = document_run(pipeline.search(Query(text, top_k=100, filters=filters[qid])))
        docs = sorted(run, key=lambda d: -run[d])[:10]
        rel = {d for d, g in dataset.qrels[qid].items() if g > 0}
        ideal = sum(1 / math.log2(i + 2) for i in range(min(10, len(rel))))
        ndcg.append(sum(1 / math.log2(i + 2) for i, d in enumerate(docs) if d in rel) / ideal)
        recall.append(len(set(docs) & rel) / len(rel))
        first.append(docs[0] if docs else None)
    return np.array(ndcg), np.array(recall), first


def main() -> None:
    which, variants = sys.argv[1], sys.argv[2:]
    folder, split, group, query_filter, entry = SETS[which]
    dataset = load_dataset(Path(folder), split)
    if query_filter:
        dataset = filter_queries(dataset, query_filter)
    filters = query_filters(dataset, group)
    pipeline = Pipeline(load_settings(None, {"pipeline": {
        "keyword": "fts5", "semantic": "sqlite-vec", "embedder": "fastembed",
        "reranker": "conversation", "dedup": "cosine"}}), load_registry(), Path(entry))
    pipeline.warm(("reranker",))
    pipeline.warm()
    base = None
    for variant in variants:
        RULE["name"], _, cos = variant.partition("@")
        RULE["cos"] = float(cos or 0.0)
        ndcg, recall, first = ask(pipeline, dataset, filters)
        if base is None:
            base = (ndcg, recall, first)
        for qid, now, was in zip(dataset.queries, ndcg, base[0], strict=True):
            if abs(now - was) > 1e-9:
                print(f"   {qid} {dataset.queries[qid]!r} {was:.3f} -> {now:.3f}")
        same = bool(np.all(ndcg == base[0]) and np.all(recall == base[1]))
        p = ((float("nan"),) * 2 if same else
             (stats.ttest_rel(ndcg, base[0]).pvalue, stats.ttest_rel(recall, base[1]).pvalue))
        moved = sum(a != b for a, b in zip(first, base[2], strict=True))
        print(f"{which} {variant}: nDCG@10 {ndcg.mean():.4f} R@10 {recall.mean():.4f} "
              f"p {p[0]:.3f}/{p[1]:.3f} first hits moved {moved}, nDCG@10 better/worse "
              f"{int((ndcg > base[0] + 1e-9).sum())}/{int((ndcg < base[0] - 1e-9).sum())} "
              f"(n {len(ndcg)}) {COUNT}", flush=True)
        COUNT.update(shifted=0, first_moved=0)
    pipeline.close()


if __name__ == "__main__":
    main()
