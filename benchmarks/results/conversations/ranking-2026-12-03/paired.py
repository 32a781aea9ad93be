"""Paired comparison of two TREC run files of ``octomem bench --save-runs`` (2026-12-03).

``python benchmarks/results/conversations/ranking-2026-12-03/paired.py QRELS BEFORE.trec
AFTER.trec`` (QRELS: a BEIR qrels TSV; only the queries both runs hold are read from it)
prints nDCG@10, R@10 and MRR@10 of both runs (binary gains, as ranx scores the bench's
runs: the means equal the bench's reports) and a two-sided paired t-test per metric over
the queries, with how many got better and worse.
"""

from __future__ import annotations

import sys

import numpy as np
from scipy import stats

METRICS = ("nDCG@10", "R@10", "MRR@10")


def read_run(path: str) -> dict[str, list[str]]:
    """Each query's documents in rank order (``qid Q0 docid rank score row`` lines)."""
    ranked: dict[str, list[tuple[int, str]]] = {}
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            qid, _, doc, rank, _, _ = line.split()
            ranked.setdefault(qid, []).append((int(rank), doc))
    return {q: [d for _, d in sorted(rows)] for q, rows in ranked.items()}


def read_qrels(path: str, wanted: set[str]) -> dict[str, set[str]]:
    """The relevant documents of the ``wanted`` queries from a BEIR qrels TSV."""
    out: dict[str, set[str]] = {}
    with open(path, encoding="utf-8") as lines:
        next(lines)  # query-id corpus-id score
        for line in lines:
            qid, doc, score = line.rstrip("\n").split("\t")
            if qid in wanted and int(score) > 0:
                out.setdefault(qid, set()).add(doc)
    return out


def scores(ranked: list[str], relevant: set[str]) -> tuple[float, float, float]:
    """nDCG@10, recall@10 and MRR@10 of one query."""
    top = ranked[:10]
    dcg = sum(1 / np.log2(i + 2) for i, d in enumerate(top) if d in relevant)
    ideal = sum(1 / np.log2(i + 2) for i in range(min(10, len(relevant))))
    first = next((1 / (i + 1) for i, d in enumerate(top) if d in relevant), 0.0)
    return dcg / ideal, len(set(top) & relevant) / len(relevant), first


def main() -> None:
    qrels_path, before_path, after_path = sys.argv[1:4]
    before, after = read_run(before_path), read_run(after_path)
    judged = read_qrels(qrels_path, set(before) & set(after))
    queries = sorted(judged)
    b = np.array([scores(before[q], judged[q]) for q in queries])
    a = np.array([scores(after[q], judged[q]) for q in queries])
    print(f"{len(queries)} queries")
    for j, name in enumerate(METRICS):
        x, y = b[:, j], a[:, j]
        p = stats.ttest_rel(y, x).pvalue if (x != y).any() else 1.0
        print(f"{name}: {x.mean():.4f} -> {y.mean():.4f} ({y.mean() - x.mean():+.4f}); better "
              f"{(y > x).sum()}, worse {(y < x).sum()}, paired t p {p:.3g}")


if __name__ == "__main__":
    main()
