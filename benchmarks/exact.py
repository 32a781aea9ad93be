"""Exact float search over stored vectors, and a semantic arm's recall@k against it.

The reference an approximate or quantized index is judged by (ANN-Benchmarks usage:
Aumüller, Bernhardsson & Faithfull, "ANN-Benchmarks", Information Systems 2020):
recall@k = |arm's top k ∩ exact top k| / k, averaged over queries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


def exact_top_k(vectors: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """Return each query's ``k`` highest-scoring rows by dot product (cosine on unit rows).

    :param vectors: ``(n, dim)`` float32 stored vectors.
    :param queries: ``(q, dim)`` float32 query vectors.
    :returns: ``(q, min(k, n))`` int64 row indices, best first; equal scores keep the
        lower index first.
    """
    k = min(k, len(vectors))
    out = np.zeros((len(queries), k), dtype=np.int64)
    for i, q in enumerate(queries):
        scores = vectors @ q
        top = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
        out[i] = top[np.lexsort((top, -scores[top]))]
    return out


def recall_at_k(
    found: Mapping[str, Sequence[str]], exact: Mapping[str, Sequence[str]], k: int
) -> float:
    """Return mean recall@k of ``found`` against ``exact`` over the queries of ``exact``.

    :param found: query id -> ids the arm returned, best first (a missing query counts 0).
    :param exact: query id -> ids of the exact search, best first.
    :returns: mean over queries of ``|found[:k] ∩ exact[:k]| / min(k, len(exact[:k]))``;
        ``nan`` when ``exact`` is empty.
    """
    scores = []
    for qid, truth in exact.items():
        want = set(list(truth)[:k])
        if not want:
            continue
        got = set(list(found.get(qid, ()))[:k])
        scores.append(len(got & want) / len(want))
    return float(np.mean(scores)) if scores else float("nan")
