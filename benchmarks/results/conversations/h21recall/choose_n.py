"""Choose ``arms.conversation.neighbours`` on LoCoMo's tune half, over the candidates.

``python choose_n.py CACHE_ENTRY DATASET N [N ...]`` (CACHE_ENTRY: the bench cache's
``locomo-*/fastembed-*`` folder; DATASET: ``../shared/data/locomo``): asks each tune
question of its conversation as ``octomem.benchmarks.fit_ranking.ask`` does (both arms'
top 100, RRF), adds the previous and next turn (same session) of the first N fused
candidates that are not candidates already, scores every candidate with the shipped
``peer`` weights, and prints nDCG@10 and R@10 over the 760 questions with paired
t-tests against N = 0 (which reproduces the bench's 0.6665 / 0.7963).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from scipy import stats

from octomem.benchmarks import fit_ranking as fr
from octomem.engine.fusion import reciprocal_rank_fusion
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline, embedding_text
from octomem.engine.settings import load_settings
from octomem.engine.types import Filters
from octomem.plugins.conversation.expansion import expansion_words, word_columns
from octomem.plugins.conversation.features import (
    TurnColumns,
    folded_words,
    query_terms,
    standardised,
    term_matches,
    turn_features,
)

TUNE = {"conv-26", "conv-30", "conv-41", "conv-42", "conv-43"}


def scores(pipeline, text, group, by_position, order, n):
    arms = pipeline.arms
    filters = Filters(metadata={"conv_id": group})
    kw_run = arms.keyword.search(text, filters, fr.DEPTH)
    vector = arms.embedder.embed_query(text)
    fused = reciprocal_rank_fusion([kw_run, arms.semantic.search(vector, filters, fr.DEPTH)],
                                   pipeline.settings.retrieval.rrf_k)
    chunks = arms.storage.get_chunks([f.chunk_id for f in fused])
    held, added = {c.id for c in chunks}, []
    for c in chunks[:n]:
        for step in (-1, 1):
            j = by_position.get((group, c.metadata["session"], c.metadata["position"] + step))
            if j is not None and j not in held:
                held.add(j)
                added.append(j)
    chunks += arms.storage.get_chunks(added)
    cos = arms.semantic.vectors([c.id for c in chunks]) @ vector
    kw = {h.chunk_id: h.score for h in kw_run}
    turns = [fr._turn(c, group, order) for c in chunks]
    texts = [embedding_text(c) for c in chunks]
    columns = TurnColumns.of(turns)
    expansion, soft = word_columns(expansion_words(text), columns.speakers,
                                   [expansion_words(t) for t in texts], fr.word_vectors(pipeline),
                                   text_words=[expansion_words(c.text) for c in chunks])
    raw = turn_features(folded_words(text), turns, np.array([kw.get(c.id, 0.0) for c in chunks]),
                        cos, term_matches(query_terms(text), texts),
                        np.array(["?" in c.text for c in chunks], dtype=bool), expansion, soft)
    w = np.array(json.loads(fr.WEIGHTS.read_text())["weights"]["peer"])
    return [c.document_id for c in chunks], standardised(raw, fr.BINARY) @ w[:-1] + w[-1]


def main() -> None:
    entry, folder, ns = sys.argv[1], Path(sys.argv[2]), [int(a) for a in sys.argv[3:]]
    rows = [json.loads(line) for line in (folder / "queries.jsonl").read_text().splitlines()]
    questions = {r["_id"]: (r["text"], r["metadata"]["conv_id"]) for r in rows
                 if r["metadata"]["conv_id"] in TUNE}
    qrels: dict[str, set[str]] = {}
    for line in (folder / "qrels" / "test.tsv").read_text().splitlines()[1:]:
        q, d, _ = line.split("\t")
        qrels.setdefault(q, set()).add(d)
    pipeline = Pipeline(load_settings(overrides={"pipeline": {"reranker": None}},
                                      read_user_config=False), load_registry(), entry)
    pipeline.warm()
    by_position, order, seen = {}, {}, {}
    for c in pipeline.arms.storage.iter_chunks():
        g = c.metadata.get("conv_id")
        order[c.id] = seen.get(g, 0)
        seen[g] = order[c.id] + 1
        by_position[(g, c.metadata.get("session"), c.metadata.get("position"))] = c.id
    results = {}
    for n in [0, *ns]:
        nd, rc = [], []
        for qid, (text, group) in questions.items():
            if qid not in qrels:
                continue
            docs, s = scores(pipeline, text, group, by_position, order, n)
            top = [docs[i] for i in np.argsort(-s, kind="stable")[:10]]
            rel = qrels[qid]
            ideal = sum(1 / np.log2(i + 2) for i in range(min(10, len(rel))))
            nd.append(sum(1 / np.log2(i + 2) for i, d in enumerate(top) if d in rel) / ideal)
            rc.append(len(set(top) & rel) / len(rel))
        results[n] = (np.array(nd), np.array(rc))
        base = results[0]
        p = ((stats.ttest_rel(nd, base[0]).pvalue, stats.ttest_rel(rc, base[1]).pvalue)
             if n else (float("nan"),) * 2)
        print(f"N {n}: nDCG@10 {np.mean(nd):.4f} R@10 {np.mean(rc):.4f} "
              f"p {p[0]:.3f} / {p[1]:.3f} (questions {len(nd)})", flush=True)
    pipeline.close()


if __name__ == "__main__":
    main()
