"""Paired comparison of two TREC run files of ``octomem bench --save-runs`` (2026-12-03).

``python benchmarks/results/conversations/ranking-2026-12-03/paired.py QRELS BEFORE.trec
AFTER.trec`` prints nDCG@10, R@10 and MRR@10 of both over the queries the two runs share
(ranx, as the bench scores them) and a two-sided paired t-test per metric over the queries.
"""

from __future__ import annotations

import sys

import numpy as np
from ranx import Qrels, Run, evaluate
from scipy import stats

METRICS = ("ndcg@10", "recall@10", "mrr@10")


def beir_qrels(path: str, wanted: set[str]) -> dict[str, dict[str, int]]:
    """The judged documents of the ``wanted`` queries only, from a BEIR qrels TSV."""
    out: dict[str, dict[str, int]] = {}
    with open(path, encoding="utf-8") as lines:
        next(lines)  # query-id corpus-id score
        for line in lines:
            qid, doc, score = line.rstrip("\n").split("\t")
            if qid in wanted and int(score) > 0:
                out.setdefault(qid, {})[doc] = int(score)
    return out


def main() -> None:
    qrels_path, before_path, after_path = sys.argv[1:4]
    before = Run.from_file(before_path, kind="trec")
    after = Run.from_file(after_path, kind="trec")
    judged = beir_qrels(qrels_path, set(before.keys()) & set(after.keys()))
    shared = sorted(judged)
    q = Qrels(judged)
    b = Run({k: before.to_dict()[k] for k in shared})
    a = Run({k: after.to_dict()[k] for k in shared})
    print(f"{len(shared)} queries")
    for metric in METRICS:
        evaluate(q, b, metric)
        evaluate(q, a, metric)
        x = np.array([b.scores[metric][k] for k in shared])
        y = np.array([a.scores[metric][k] for k in shared])
        p = stats.ttest_rel(y, x).pvalue if (x != y).any() else 1.0
        print(f"{metric}: {x.mean():.4f} -> {y.mean():.4f} ({y.mean() - x.mean():+.4f}); "
              f"better {(y > x).sum()}, worse {(y < x).sum()}, paired t p {p:.4g}")


if __name__ == "__main__":
    main()
