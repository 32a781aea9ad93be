"""What a hit's score means to a caller: a relevance in [0, 1], comparable across queries.

Fused scores (RRF) and reranker scores are ranks in disguise: the best hit of a query
about something never stored scores as high as the best hit of a good query. Relevance
is instead a calibrated probability that the hit answers the query, from features whose
scale does not depend on the query or the store:

- ``cos``: the hit's cosine similarity to the query (the semantic arm's own scale);
- ``coverage``: the share of the query's content words (stop words and question
  scaffolding dropped, light suffix folding) found in the hit's title and text, in any
  inflection the keyword arm matches that :func:`~.words.root` tells ("pin" by "pinned").

Each is weighed by the logistic model of :mod:`.relevance_model` (its weights are data,
``relevance.json``, fitted on tune splits only), with the answer's features ``unheard``,
``aside``, ``strength`` and the small-store term; a document's hit has its own weights
(``cos_lift``, ``kw_z``).

The document weights' ``cos_lift`` and ``kw_z`` mean what they were fitted on only when
the runs are a *background*, the query's nearest neighbours in a store larger than the
run: every SciFact train run
(own and masked, :mod:`octomem.benchmarks.masked` keeps them full) held ``candidate_k``
= 100 cosines of 5,183 abstracts. In a store with fewer reachable chunks than the run
asks for, the run *is* the store: with one file the hit is most of the run's mean, so
``cos_lift`` and ``kw_z`` collapse to 0 (FTS5 clamps idf at 1e-6) and a note asked in
its own words scored 0.02. So the document weights apply only when the runs are full
(:attr:`RunStats.background`); else a document's hit gets the turn weights and
``retrieval.relevance_floor`` (cosine, coverage, unheard words: no background needed).
No tuned constant: it is the condition the weights were fitted under, so SciFact's
figures are unchanged by construction. The runs are taken at their first ``candidate_k``
entries whatever ``top_k`` (:func:`judged_depth`), and a keyword run whose ``candidate_k``
entries all tie with its best, or whose ``candidate_k``-th entry holds every word of the
query, is no background either (:func:`saturated`, :func:`whole_query_run`: that many
chunks answer alike, none can stand out; trial 16 F16, trial 17 G13). A leave-one-out
background was not taken: on a full run it moves the lift by ``(cos − mean)/(k − 1)``
(1 % at k = 100), and in a store of one or two files its "background" is the file's
siblings, not the neighbourhood.

An answer is empty, with a reason (abstention: nothing stored answers the query), when
no hit reaches its floor: ``retrieval.relevance_floor``, or
``retrieval.document_relevance_floor`` for a document's hit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

# the features (relevance_features), the small-store term and the words: this module's API
from .relevance_features import (  # noqa: F401
    ADDRESSED_AS,
    ASSISTANT,
    FIRST_PERSON,
    ROLE,
    UNHEARD_CAP,
    RunStats,
    about_asker,
    aside,
    coverage,
    indexed_rows,
    judged_depth,
    keyword_strength,
    run_stats,
    saturated,
    stored_text,
    unheard_words,
    whole_query_run,
)
from .relevance_model import (  # noqa: F401 (this module's API)
    WEIGHTS_FILE,
    DocumentWeights,
    RelevanceModel,
    shipped_model,
    sigmoid,
)
from .small_store import SMALL_STORE, short_run, small_term  # noqa: F401 (this module's API)
from .words import FUNCTION_WORDS, content_words, query_words  # noqa: F401 (this module's API)

#: How many of an answer's first hits decide whether it abstains, whatever its ``top_k``:
#: the floors were chosen judging each question's first 10 hits (the tool's default
#: ``retrieval.top_k``; ``benchmarks/fit_ranking.py``, ``benchmarks/fit_relevance.py`` and
#: the abstention pass, ``benchmarks/subsets.py``), so a floor means what it was chosen for.
JUDGED_HITS = 10

#: Kinds whose hits are scored with the document weights (``ingest``'s files and BEIR rows).
DOCUMENT_KINDS = frozenset({"DOC"})

Band = Literal["high", "medium", "low"]
#: Lowest relevance of a ``high`` hit: more likely than not to answer the query (the
#: probability is calibrated on the tune splits, so 0.5 means what it says).
HIGH = 0.5
#: Lowest relevance of a ``medium`` hit (and it must reach its floor): an answer whose
#: best hit is there holds the question's evidence at least one time in three
#: (``benchmarks/fit_bands.py``: the lowest bound at which, on every tune set, at least
#: 1/3 of the answers whose best hit lies in [bound, 0.5) hold it; LongMemEval --split
#: tune asked of every haystack, LoCoMo conv-26/30/41/42/43 of every conversation, and
#: small stores of one session of either). Below it a hit is ``low`` even when it passes
#: the floor: answers whose best hit is between the floor and this bound held the
#: evidence 3 times in 36 on LongMemEval tune asked of every haystack (trial 16 F12:
#: near-topic questions nothing answers were labelled ``medium`` at relevance 0.05-0.15).
MEDIUM = 0.07


def band(p: float, floor: float) -> Band:
    """Return ``"high"`` (>= :data:`HIGH`: likely answers), ``"medium"`` (>= :data:`MEDIUM`
    and >= ``floor``, the hit's kind's floor: may answer) or ``"low"`` (unlikely to: below
    the floor, shown only because a better hit of the same answer passed it, or a weak
    match that passed it)."""
    return "high" if p >= HIGH else "medium" if p >= max(floor, MEDIUM) else "low"


@dataclass(frozen=True, slots=True)
class Relevance:
    """A hit's relevance and how it was reached (for ``explain``).

    :param probability: in [0, 1].
    :param band: :func:`band`.
    :param cos: cosine to the query, ``None`` when unknown.
    :param coverage: share of the query's content words the hit holds.
    :param cos_lift: a document's hit: its cosine minus the mean of the query's semantic
        run (``None`` for other hits or without a cosine).
    :param kw_z: a document's hit: its keyword score z-scored within the keyword run.
    :param unheard: a turn's or statement's hit: the query's content words the memory
        never mentions (:func:`unheard_words`), each lowering the relevance.
    :param aside: an assistant's turn asked about the user's own life (:func:`aside`),
        its relevance lowered by ``RelevanceModel.aside``.
    :param reach: the chunks the query was compared with, when :func:`.small_term` raised it.
    :param strength: the answer's keyword strength (:func:`keyword_strength`), when its
        term entered the relevance (``None``: it did not).
    :param reply_own: a reply to a question turn the query matched: its own probability,
        before it took the question's probability and band (``None``: not such a reply,
        or its own was higher; :func:`octomem.engine.memory.judge.replies`).
    :param passes: the probability reaches the floor of the hit's kind (it answers: it
        is recalled and kept first by ``max_tokens``), whatever its band.
    """

    probability: float
    band: Band
    cos: float | None
    coverage: float
    cos_lift: float | None = None
    kw_z: float | None = None
    unheard: int = 0
    aside: bool = False
    reach: int | None = None
    strength: float | None = None
    reply_own: float | None = None
    passes: bool = True


def relevance_of(query: str, text: str, cos: float | None, floor: float,
                 model: RelevanceModel | None = None, embedder: str | None = None,
                 stats: RunStats | None = None, keyword_score: float | None = None,
                 unheard: int = 0, aside: bool = False, reach: int | None = None,
                 strength: float | None = None) -> Relevance:
    """Return the :class:`Relevance` of a hit whose title and text are ``text``.

    :param cos: the hit's cosine to the query; ``None`` or NaN when unknown.
    :param floor: the floor of the hit's kind (for the band): ``retrieval.relevance_floor``
        or, with ``stats``, ``retrieval.document_relevance_floor``.
    :param embedder: the model id of the embedder ``cos`` comes from; a cosine of an
        embedder the model was not fitted on is not used (:meth:`RelevanceModel.fits`).
    :param stats: given for a document's hit (:data:`DOCUMENT_KINDS`): the query's runs,
        so the document weights apply (when the model has them and the runs are a
        :attr:`RunStats.background`; else the turn weights, with ``unheard``).
    :param keyword_score: the hit's score in the keyword run (``None``: not in it).
    :param unheard: the answer's unheard query words (:func:`unheard_words`; used with
        the turn weights only: a document-weighted hit ignores it).
    :param aside: the hit is an assistant's turn and the query is about its asker
        (:func:`aside`; turns only).
    :param reach: the chunks the query was compared with, ``None``: full runs (turns only).
    A document's hit that is the keyword run's one entry (the one chunk holding any of
    the query's words) and holds every content word of the query is at least as relevant
    as a turn of its cosine and coverage would be (the turn weights; trial 19 K7: in
    20,000 notes a marker token one note holds, asked alone, had ``kw_z`` 9.95, the most a
    run of 100 allows, yet its cosine 0.15 under the run's mean (a made-up token embeds
    near nothing) gave 0.044-0.056 under the document floor, and 4 of 10 such searches
    answered "nothing stored answers this"; as a turn, 0.25). No SciFact train claim's run
    is one chunk holding the whole claim: the document weights' figures are unchanged
    (``benchmarks/results/abstention/sole-match/``).

    :param strength: the answer's keyword strength (:func:`keyword_strength`; turns and
        statements with a cosine only; ``None``: not used; the caller gives it only with
        full runs and the keyword arm it was fitted on, :meth:`RelevanceModel.uses_strength`).
    """
    model = model or shipped_model()
    cov = coverage(query_words(query), text)
    if cos is None or math.isnan(cos) or not model.fits(embedder):
        cos = None
    cos = None if cos is None else float(cos)
    if stats is not None and stats.background and model.document is not None:
        lift = None if cos is None or stats.cos_mean is None else cos - stats.cos_mean
        kw_z = stats.kw_z(keyword_score)
        p = sigmoid(model.document.z(cos, cov, lift, kw_z))
        if stats.kw_entries == 1 and keyword_score is not None and cov >= 1.0:
            p = max(p, model.probability(cos, cov))  # the sole match: see above
        return Relevance(p, band(p, floor), cos, cov, lift, kw_z, passes=p >= floor)
    strength = strength if cos is not None and model.strength[0] else None
    p = model.probability(cos, cov, unheard, aside, reach, strength)
    small = cos is not None and small_term(model.small_store, reach)
    return Relevance(p, band(p, floor), cos, cov, unheard=unheard if cos is not None else 0,
                     aside=aside and cos is not None and model.aside != 0.0,
                     reach=reach if small else None, strength=strength, passes=p >= floor)


def abstain_reason(best: float, floor: float,
                   setting: str = "retrieval.relevance_floor") -> str:
    """Say why an answer is empty: its best hit's relevance is below the floor
    ``setting`` (the floor of that hit's kind)."""
    return (f"nothing stored answers this (the best match's relevance {best:.3f} is below "
            f"{setting} {floor:g})")


class HitJudge:
    """The relevance of one store's hits for one query (:meth:`~octomem.engine.pipeline.
    Pipeline.search`; recall across scopes has :mod:`octomem.engine.memory.judge`).

    :param retrieval: the ``retrieval`` settings (the two floors).
    :param arms: the store's arms (their names find each hit's keyword score).
    :param runs: the query's runs (a document's hit is judged against them).
    :param filters: the query's filters (what the memory it may reach holds, for
        :func:`unheard_words`); ``None``: unheard words are not counted.
    :param texts: the titles and texts of the answer's first hits (``JUDGED_HITS``), the
        ones :func:`unheard_words` looks in before asking the keyword arm.
    :param k: how many of each run's entries the statistics are taken over
        (:func:`judged_depth`; ``None``: the runs are taken as a background, :func:`run_stats`).
    :param query: the query's text, for :func:`whole_query_run` ("": not checked).
    """

    def __init__(self, retrieval: Any, arms: Any, runs: Sequence[Sequence[Any]],
                 filters: Any = None, texts: Sequence[str] = (), k: int | None = None,
                 query: str = "") -> None:
        self.retrieval, self.arms, self._runs, self._k = retrieval, arms, runs, k
        self._query = query
        self._stats: RunStats | None = None
        self._filters, self._texts = filters, texts
        self._unheard: dict[str, int] = {}
        self._strength: tuple[float | None] | None = None

    def unheard(self, query: str) -> int:
        """Return ``query``'s unheard words in this store (:func:`unheard_words`; computed
        once; 0 without filters or a keyword arm)."""
        keyword = getattr(self.arms, "keyword", None)
        if self._filters is None or keyword is None:
            return 0
        if query not in self._unheard:
            self._unheard[query] = unheard_words(
                query, self._texts, lambda word: bool(keyword.search(word, self._filters, 1)))
        return self._unheard[query]

    def stats(self) -> RunStats:
        """Return the runs' :class:`RunStats` (computed once; a background when the runs
        hold the ``k`` asked and the keyword run is not the query's matches, :func:`run_stats`,
        :func:`whole_query_run`)."""
        if self._stats is None:
            names = (getattr(self.arms.semantic, "name", None),
                     getattr(self.arms.keyword, "name", None))
            hits = [[h for run in self._runs for h in run if h.arm == n] for n in names]
            covered = bool(self._query) and whole_query_run(
                self._query, hits[1], self._k, stored_text(self.arms.storage))
            self._stats = run_stats([h.score for h in hits[0]], [h.score for h in hits[1]],
                                    self._k, covered)
        return self._stats

    def strength(self) -> float | None:
        """Return the answer's keyword strength (:func:`keyword_strength`; computed once)
        when its term applies: the shipped model's keyword arm ran and the semantic run
        is full; else ``None``."""
        if self._strength is None:
            keyword = getattr(self.arms, "keyword", None)
            name = getattr(keyword, "name", None)
            stats, value = self.stats(), None
            if (shipped_model().uses_strength(name) and stats.cos_mean is not None
                    and stats.reach is None):
                top = max((h.score for run in self._runs for h in run if h.arm == name),
                          default=None)
                value = keyword_strength(top, indexed_rows(self.arms))
            self._strength = (value,)
        return self._strength[0]

    def __call__(self, query: str, hit: Any, text: str, cos: float | None) -> Relevance:
        """Return the relevance of ``hit`` (a fused hit: ``chunk``, ``contributions``)
        whose title and text are ``text``; ``cos`` its cosine, ``None`` when unknown. A
        document's hit whose runs are no background is judged as a turn (weights, floor)."""
        doc = (hit.chunk.kind in DOCUMENT_KINDS and shipped_model().document is not None
               and self.stats().background)
        kw = hit.contributions.get(getattr(self.arms.keyword, "name", ""))
        floor = (self.retrieval.document_relevance_floor if doc
                 else self.retrieval.relevance_floor)
        return relevance_of(query, text, cos, floor,
                            embedder=getattr(self.arms.embedder, "model_id", None),
                            stats=self.stats() if doc else None,
                            keyword_score=None if kw is None else kw.score,
                            unheard=0 if doc or not shipped_model().unheard
                            else self.unheard(query),
                            aside=not doc and self.retrieval.assistant_aside
                            and aside(query, hit.chunk.metadata),
                            reach=None if doc else self.stats().reach,
                            strength=None if doc else self.strength())
