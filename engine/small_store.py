"""The small-store term of a turn's or statement's relevance (:mod:`.relevance`).

``reach`` is an answer's: how many chunks the query was compared with, when its semantic
runs came back shorter than asked (the store, under the query's filters, holds fewer
vectors than ``candidate_k``; every scope's run summed). Below :data:`SMALL_STORE` a
turn's or statement's logit gains ``w · ln(SMALL_STORE / max(reach, SMALL_STORE_LEAST))``
(``w``: ``small_store`` in ``relevance.json``; hybrid weights only): the best of a few
chunks is less often a stranger that happens to be close than the best of hundreds, and
a paraphrase asked of a few notes shares few words with them (its other words are
unheard). The turn weights, the unheard weight and the floor were fitted on stores of
369 turns or more (a LoCoMo conversation; a LongMemEval haystack, ~490), whose runs are
full, so the term leaves them as they were. ``w`` and :data:`SMALL_STORE_LEAST` were
chosen after them by ``benchmarks/fit_turn_relevance.py`` (``collect --stores
session|speaker``, ``fit --small-only``) on small stores drawn from the same tune
splits: one session of a conversation or haystack, or one speaker's turns of it (1-43
chunks), asked its own questions and other groups'; among the pairs keeping >= 90 % of
the latter empty on every set, the one nearest issue 12's targets
(benchmarks/results/conversations/small-store-2026-12-02/report.md).
"""

from __future__ import annotations

import math

#: A query compared with fewer chunks than this is asked of a small store:
#: ``retrieval.candidate_k``'s default, the depth of every run of the fit; every store of
#: the tune sets the other weights and the floor were chosen on fills such a run.
SMALL_STORE = 100
#: Below this reach the term stops growing (at most ``w · ln 4``): chosen with ``w`` by
#: ``benchmarks/fit_turn_relevance.py`` (``LEAST_REACHES``; set by hand from its output).
#: Without it (1) a one-file store gained 3.5 logits at 0.75 and passed "largemouth bass
#: fishing" asked of a note on pelicans (cosine 0.23); on the tune small stores it also
#: comes nearer the targets (report).
SMALL_STORE_LEAST = 25


def short_run(held: int, k: int | None) -> int | None:
    """Return ``held``, the length of a semantic run that was asked for ``k`` entries,
    when it is shorter (the store held no more reachable vectors), else ``None``."""
    return held if k is not None and held < k else None


def small_term(weight: float, reach: int | None, least: int = SMALL_STORE_LEAST) -> float:
    """Return ``weight · ln(SMALL_STORE / max(reach, least, 1))`` for ``reach`` <
    :data:`SMALL_STORE`, else 0 (``None``: a full run); non-increasing in ``reach`` for
    ``weight >= 0``, at most ``weight · ln(SMALL_STORE / least)``."""
    if reach is None or reach >= SMALL_STORE or not weight:
        return 0.0
    return weight * math.log(SMALL_STORE / max(reach, least, 1))
