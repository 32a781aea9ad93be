"""The exact top ``k`` of a score array, ordered best first with ties by ascending id.

Every exact path of the in-RAM scan ends here (:meth:`.matrix.VectorMatrix.top_k` and
the kept-subset search of :mod:`.scan`). The ``k`` best are picked by ``argpartition``
on short arrays and :func:`.projection.top_rows` on long ones (both pick an arbitrary
subset of rows that tie at the ``k``-th score), then every row tying with the ``k``-th
score is taken when they straddle the cut, so the answer is the first ``k`` rows by
(score descending, id ascending) whatever the rows' order: the same ids for the same
scores (before December 2 a tie at the cut was broken by ``argpartition``'s choice).
"""

from __future__ import annotations

import numpy as np

from .projection import top_rows

#: Arrays up to this length are cut by one ``argpartition``; longer ones by
#: :func:`.projection.top_rows`'s sampled threshold. Measured for k = 100 (2 shared cores,
#: load 6.4): 11.9 against 17.6 us at 1,000 scores, 43 against 33 us at 10,000.
SHORT = 4096


def select_top(scores: np.ndarray, ids: np.ndarray, k: int) -> np.ndarray:
    """Return the positions of the ``k`` best ``scores``, ordered by score descending,
    then ``ids`` ascending.

    :param scores: float32 ``(n,)``, no NaN.
    :param ids: int64 ``(n,)``, the chunk id of each score (distinct).
    :param k: >= 1.
    :returns: int64 ``(min(k, n),)`` positions into ``scores``.
    """
    n = len(scores)
    if k < n:
        if n <= SHORT:
            cut = np.argpartition(scores, n - k)[n - k:]
            kth = scores[cut[0]]  # argpartition puts the k-th best first in the cut
        else:
            cut = top_rows(scores, k)
            kth = scores[cut].min()
        if np.count_nonzero(scores >= kth) > k:  # rows tie with the k-th across the cut
            cut = np.flatnonzero(scores >= kth)
    else:
        cut = np.arange(n)
    order = np.lexsort((ids[cut], -scores[cut]))[:k]
    return cut[order]
