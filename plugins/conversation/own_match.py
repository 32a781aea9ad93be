"""Whether a candidate turn matches the query itself, and the floor that puts under the
``conversation`` reranker's lifts.

The reranker scores a turn by its neighbours and its session as well as by its own text
(``win_cov``, ``prev_kw``, ``session_max``, ...) and lifts every assistant's turn when
the question recalls the assistant's words (``arms.conversation.addressed``). Those
lifts re-order the turns that match the query themselves; they never put a turn that
does not above one that does. A turn matches when it holds one of the query's content
words (:func:`~octomem.engine.relevance.content_words`), a word that means one (the
``expansion`` feature, at ``arms.conversation.expansion_tau``), or replies to a question
turn that holds one (the ``prev_question`` feature: "Where are we staying?" -> "A small
guesthouse in Ribeira"). Trial 17 G20: "what did you suggest for part timeouts?" ranked
"Sounds good. Until then, the clips will upload fine ..." (no word of the question,
relevance 0.00) before the reply that answers it (0.17), lifted by the turn before it.

On the tune splits the floor moves no first hit and no question's nDCG@10 (LoCoMo
conv-26/30/41/42/43 and LongMemEval ``--split tune``: runs re-scored offline,
``benchmarks/results/conversations/h22rank/README.md``); it has no constant to choose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .features import FEATURES

if TYPE_CHECKING:
    import numpy as np

#: Columns of :func:`~.features.turn_features` that say a turn matches the query.
EXPANSION, PREV_QUESTION = FEATURES.index("expansion"), FEATURES.index("prev_question")
#: How far (in the reranker's logits) below the lowest-scored matching turn the
#: best-scored turn that does not match is put. Not tuned: any positive gap gives the same
#: order; one logit keeps the gap visible in ``explain``.
GAP = 1.0


def own_match(matches: np.ndarray, raw: np.ndarray) -> np.ndarray:
    """Return which candidate turns match the query themselves.

    :param matches: ``(n, T)`` bool, which turn holds which of the query's content words
        (:func:`~.features.held_terms`).
    :param raw: ``(n, len(FEATURES))`` float64, :func:`~.features.turn_features`.
    :returns: ``(n,)`` bool: holds a query word, a word meaning one (``expansion`` > 0),
        or replies to a question turn holding one (``prev_question`` > 0).
    """
    return matches.any(axis=1) | (raw[:, EXPANSION] > 0) | (raw[:, PREV_QUESTION] > 0)


def below_unmatched(scores: np.ndarray, matched: np.ndarray) -> np.ndarray:
    """Return ``scores`` with every turn that does not match (``~matched``) moved below
    every turn that does, by one shift of all of them: their order among themselves, and
    the matching turns' scores, stay as they were. Nothing moves when every turn, or none,
    matches, or when the turns that do not match are already below.

    :param scores: ``(n,)`` float64, the reranker's scores, higher is better.
    :param matched: ``(n,)`` bool, :func:`own_match`.
    :returns: ``(n,)`` float64 (``scores`` itself when nothing moves).
    """
    if matched.all() or not matched.any():
        return scores
    lowest, highest = scores[matched].min(), scores[~matched].max()
    if highest < lowest:
        return scores
    out = scores.copy()
    out[~matched] -= highest - lowest + GAP
    return out
