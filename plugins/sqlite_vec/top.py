"""The exact top ``k`` of a score array, ordered best first with ties by ascending id.

Every exact path of the in-RAM scan ends here (:meth:`.matrix.VectorMatrix.top_k` and
the kept-subset search of :mod:`.scan`). The ``k``-th best score is found by
``np.partition`` on short arrays and :func:`.projection.top_rows` on long ones; every row
reaching it is taken (the rows tying with the ``k``-th score included, when they straddle
the cut), so the answer is the first ``k`` rows by (score descending, id ascending)
whatever the rows' order: the same ids for the same scores (before December 2 a tie at
the cut was broken by ``argpartition``'s choice).
"""

from __future__ import annotations

import numpy as np

from .projection import top_rows

#: Arrays up to this length find the ``k``-th score by one ``np.partition``; longer ones
#: by :func:`.projection.top_rows`'s sampled threshold (which samples from this length
#: on). Measured for k = 100 (the whole selection, 2 shared cores, load 10): 19.6 / 29.9
#: / 33.6 against 47.7 / 69.7 / 56.3 us at 2k / 8k / 16k scores, 89 against 70 us at 32k.
SHORT = 16_384


def select_top(scores: np.ndarray, ids: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the ids and scores of the ``k`` best ``scores``, ordered by score descending,
    then id ascending.

    The ``k``-th best score is found first; every row reaching it is kept (the ``k`` best
    and any row tying with the ``k``-th), and those are ordered. On 1,000 scores: 11 us
    against 16 us for ``argpartition`` positions (``np.partition`` of the values is the
    SIMD sort's, a third of the time).

    :param scores: float32 ``(n,)``, no NaN.
    :param ids: int64 ``(n,)``, the chunk id of each score (distinct).
    :param k: >= 1.
    :returns: int64 ids and float32 scores, ``(min(k, n),)`` each.
    """
    n = len(scores)
    if k < n:
        if n <= SHORT:  # np.partition's copy and sort without its wrapper (~1 us each,
            part = scores.copy()  # a few us when the caches are cold, as
            part.partition(n - k)  # np.flatnonzero's ravel below)
            kth = part[n - k]
        else:
            kth = scores[top_rows(scores, k)].min()
        cut = (scores >= kth).nonzero()[0]
        ids, scores = ids[cut], scores[cut]
    order = np.lexsort((ids, -scores))[:k]
    return ids[order], scores[order]
