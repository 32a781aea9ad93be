"""Compare two bench reports of one split question by question, from their saved runs.

``python compare.py BEFORE AFTER QRELS``: BEFORE and AFTER are ``octomem bench --out``
folders written with ``--save-runs BEFORE/runs`` (one row, ``default``); QRELS the
split's ``qrels/*.tsv``. Prints nDCG@10 (graded gains 2^g - 1, as ranx) and R@10 of
both, the paired t-test over the questions (none when no question differs), how many
questions gained or lost, how many top 10s and first hits changed, and each report's
abstention figures.
"""

from __future__ import annotations

import json
import math
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy import stats


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """Return question -> {document -> grade} of a BEIR qrels TSV (header skipped)."""
    qrels: dict[str, dict[str, int]] = defaultdict(dict)
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        qid, doc, grade = line.split("\t")
        qrels[qid][doc] = int(grade)
    return qrels


def read_run(path: Path) -> dict[str, list[str]]:
    """Return question -> documents in rank order of a TREC run file."""
    ranked: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for line in path.read_text(encoding="utf-8").splitlines():
        qid, _, doc, rank, _, _ = line.split()
        ranked[qid].append((int(rank), doc))
    return {qid: [d for _, d in sorted(rows)] for qid, rows in ranked.items()}


def ndcg10(docs: list[str], rel: dict[str, int]) -> float:
    """Return nDCG@10 with gains 2^grade - 1."""
    dcg = sum((2 ** rel.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(docs[:10]))
    ideal = sorted(rel.values(), reverse=True)[:10]
    best = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / best if best else 0.0


def recall10(docs: list[str], rel: dict[str, int]) -> float:
    """Return the share of the relevant documents among the first 10."""
    wanted = {d for d, g in rel.items() if g > 0}
    return len(set(docs[:10]) & wanted) / len(wanted) if wanted else 0.0


def main() -> None:
    before, after, qrels_path = (Path(a) for a in sys.argv[1:4])
    qrels = read_qrels(qrels_path)
    old = read_run(before / "runs" / "default.trec")
    new = read_run(after / "runs" / "default.trec")
    asked = [q for q in old if q in qrels]
    for name, metric in (("nDCG@10", ndcg10), ("R@10", recall10)):
        x = np.array([metric(old[q], qrels[q]) for q in asked])
        y = np.array([metric(new.get(q, []), qrels[q]) for q in asked])
        p = stats.ttest_rel(y, x).pvalue if np.any(x != y) else float("nan")
        print(f"{name}: before {x.mean():.4f} after {y.mean():.4f} "
              f"({y.mean() - x.mean():+.4f}) p {p:.3f} better/worse "
              f"{int((y > x + 1e-12).sum())}/{int((y < x - 1e-12).sum())} (n {len(asked)})")
    top10 = sum(old[q][:10] != new.get(q, [])[:10] for q in asked)
    first = sum(old[q][:1] != new.get(q, [])[:1] for q in asked)
    print(f"top 10 changed: {top10}; first hit changed: {first}")
    for folder in (before, after):
        row = json.loads((folder / "report.json").read_text(encoding="utf-8"))["rows"][0]
        figures = {k: round(v, 4) for k, v in row.get("abstention", {}).items()
                   if k in ("other_empty", "own_kept", "own_evidence_at_10", "own_empty")}
        print(folder, figures)


if __name__ == "__main__":
    main()
