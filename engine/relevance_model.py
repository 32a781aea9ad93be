"""The relevance model: logistic weights over a hit's features, read from ``relevance.json``.

What a relevance means and how a hit is judged with these weights: :mod:`.relevance`.
The features (``cos``, ``coverage``, ``unheard``, ``aside``, ``strength``, ``cos_lift``,
``kw_z``) are computed in :mod:`.relevance_features` and :mod:`.small_store`.

``p = 1 / (1 + exp(-(w_cos·cos + w_cov·coverage + w_both·cos·coverage + bias
+ w_unheard·unheard)))`` — logistic regression (Cox, 1958), fitted by
``benchmarks/fit_ranking.py`` on tune splits only; the weights are data
(``relevance.json`` beside this module). ``unheard`` is an answer's, not a hit's: how many
of the query's content words no stored chunk the query could reach holds (the keyword arm
finds none under the query's filters; :func:`unheard_words`). A question naming things the
memory never mentions ("largemouth bass", asked of a memory that never spoke of fishing)
is less likely answered by any of its hits, however close their other words; its weight
``w_unheard`` (``unheard`` in ``relevance.json``, < 0) and the floor were chosen on the
tune splits by ``benchmarks/fit_turn_relevance.py``, with MiniLM cosines: the
keyword-only weights do not use it. ``aside`` is the hit's, 1 for an assistant's turn
(``role`` "assistant" in its metadata) when the question speaks of its asker ("I", "my")
and does not address the assistant ("you"; :func:`about_asker`): a question about the
user's own life is answered by what the user said, and on LongMemEval's tune split 39 of
the 89 questions asked of another haystack that passed the floor did so through an
assistant's reply that shares the question's topic ("How many playlists do I have on
Spotify?" -> a reply about Spotify playlists). Its weight ``w_aside`` (``assistant_aside``
in ``relevance.json``, <= 0; hybrid weights only) was chosen on the tune splits with the
floor by the same script. ``strength`` is an answer's too: how strongly the store's best
keyword match holds the query's words (:func:`keyword_strength`: the keyword run's top
BM25 score over ln of the store's chunks). It adds ``w_kw · (strength − c)``
(``keyword_strength`` in ``relevance.json``: the weight, the centre, and the keyword arm
whose scores it was fitted on, ``fts5``) to a turn's or statement's logit with a cosine
when its semantic runs are full (a small store has the small-store term instead). Chosen on
the tune splits by ``benchmarks/fit_strength.py``, the other terms and
``retrieval.relevance_floor`` kept as shipped (the centre moves instead of the floor, so a
small store's answers are as they were). A cosine
means something only for the embedder it was fitted with (``embedder``, a model id
prefix: the shipped MiniLM); without a semantic arm, for a hit without a vector, or with
another embedder, the keyword-only weights (coverage alone) apply.

A hit of an ingested document (kind :data:`~.relevance.DOCUMENT_KINDS`: files, BEIR corpora) has its
own weights (``document`` in ``relevance.json``, fitted on SciFact train by
``benchmarks/fit_relevance.py``): a claim's topical neighbours share its words and a
cosine near the answer's, so two features say how far the hit stands above the query's
runs over the store (:class:`RunStats`): ``cos_lift``, its cosine minus the mean cosine
of the semantic arm's run (the query's ``candidate_k`` best cosines in the store), and
``kw_z``, its keyword score z-scored within the keyword arm's run (0 when it is not in
that run). ``p = σ(w · (cos, coverage, cos·coverage, cos_lift, kw_z) + bias)``;
keyword-only ``σ(w · (coverage, kw_z) + bias)``. Turns and statements keep the weights
above (fitted on chat turns).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .relevance_features import UNHEARD_CAP
from .small_store import small_term

#: The weights shipped with the package.
WEIGHTS_FILE = Path(__file__).with_name("relevance.json")


@dataclass(frozen=True, slots=True)
class DocumentWeights:
    """Logistic weights of a document's hit: ``hybrid`` over (cos, coverage,
    cos·coverage, cos_lift, kw_z, bias), ``keyword`` over (coverage, kw_z, bias)."""

    hybrid: tuple[float, ...]
    keyword: tuple[float, ...]

    def z(self, cos: float | None, cov: float, cos_lift: float | None, kw_z: float) -> float:
        """Return the logit (see the module docstring)."""
        if cos is None or cos_lift is None:
            w_cov, w_kw, bias = self.keyword
            return w_cov * cov + w_kw * kw_z + bias
        w_cos, w_cov, w_both, w_lift, w_kw, bias = self.hybrid
        return (w_cos * cos + w_cov * cov + w_both * cos * cov + w_lift * cos_lift
                + w_kw * kw_z + bias)


@dataclass(frozen=True, slots=True)
class RelevanceModel:
    """Logistic weights ``(w_cos, w_cov, w_both, bias)`` with and without a cosine, the
    model id prefix of the embedder whose cosines they were fitted on, the weights of
    documents' hits (``None``: documents are scored as turns), ``unheard``, the logit
    added per unheard query word (:func:`unheard_words`) to a turn's or statement's
    relevance when it has a cosine (the hybrid weights'; 0: not used), and ``aside``, the
    logit added to an assistant's turn when the question is about its asker
    (:func:`aside`; hybrid weights only; 0: not used), and ``small_store``, the weight of
    :func:`~.small_store.small_term` (hybrid weights only; 0: not used), and
    ``strength``, ``(w_kw, c)`` of the keyword strength term (:func:`keyword_strength`;
    hybrid weights only; ``w_kw`` 0: not used) with ``strength_arm``, the keyword arm
    whose scores it was fitted on."""

    hybrid: tuple[float, float, float, float]
    keyword: tuple[float, float]
    embedder: str = ""
    document: DocumentWeights | None = None
    unheard: float = 0.0
    aside: float = 0.0
    small_store: float = 0.0
    strength: tuple[float, float] = (0.0, 0.0)
    strength_arm: str = ""

    def fits(self, model_id: str | None) -> bool:
        """Return whether cosines of the embedder ``model_id`` are the ones fitted on."""
        return bool(model_id) and str(model_id).startswith(self.embedder)

    @classmethod
    def load(cls, path: Path = WEIGHTS_FILE) -> RelevanceModel:
        """Read a weights file (``benchmarks/fit_ranking.py`` writes the turn weights,
        ``benchmarks/fit_relevance.py`` the document weights).

        :raises OSError: unreadable. :raises KeyError: a weight set is missing.
        """
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        doc = data.get("document")
        document = (DocumentWeights(tuple(doc["hybrid"]), tuple(doc["keyword"]))
                    if doc else None)
        kw = data.get("keyword_strength") or {}
        return cls(tuple(data["hybrid"]), tuple(data["keyword"]),  # type: ignore[arg-type]
                   str(data.get("embedder", "")), document, float(data.get("unheard", 0.0)),
                   float(data.get("assistant_aside", 0.0)), float(data.get("small_store", 0.0)),
                   (float(kw.get("weight", 0.0)), float(kw.get("centre", 0.0))),
                   str(kw.get("arm", "")))

    def uses_strength(self, keyword_arm: str | None) -> bool:
        """Return whether the keyword strength term applies to answers whose keyword run
        the arm named ``keyword_arm`` made (the one it was fitted on; weight not 0)."""
        return bool(self.strength[0]) and keyword_arm == self.strength_arm

    def probability(self, cos: float | None, cov: float, unheard: int = 0,
                    aside: bool = False, reach: int | None = None,
                    strength: float | None = None) -> float:
        """Return the relevance in [0, 1] of a hit with cosine ``cos`` (``None`` or NaN
        when unknown) and coverage ``cov`` in an answer whose query has ``unheard``
        unheard words (at most :data:`UNHEARD_CAP` count; used with a cosine only: the
        weight was chosen with the hybrid weights, on MiniLM cosines); non-decreasing in
        cos and cov over cos in [-1, 1] and cov in [0, 1] when ``w_cos, w_cov >= |w_both|``
        (the shipped weights are), and non-increasing in ``unheard`` when
        ``self.unheard <= 0`` (it is); ``aside`` (:func:`aside`) adds ``self.aside``
        with a cosine, ``reach`` (``None``: a full run) :func:`.small_term`, and
        ``strength`` (``None``: not used) ``w_kw · (strength − c)``, non-decreasing in
        ``strength`` for ``w_kw >= 0`` (it is)."""
        if cos is None or math.isnan(cos):
            w_cov, bias = self.keyword
            return sigmoid(w_cov * cov + bias)
        w_cos, w_cov, w_both, bias = self.hybrid
        z = w_cos * cos + w_cov * cov + w_both * cos * cov + bias
        return sigmoid(z + self.unheard * min(unheard, UNHEARD_CAP)
                        + (self.aside if aside else 0.0)
                        + small_term(self.small_store, reach)
                        + (0.0 if strength is None
                           else self.strength[0] * (strength - self.strength[1])))


def sigmoid(z: float) -> float:
    """Return the logistic function 1 / (1 + e^-z), z clipped to [-50, 50]."""
    return 1.0 / (1.0 + math.exp(-max(min(z, 50.0), -50.0)))


@lru_cache(maxsize=1)
def shipped_model() -> RelevanceModel:
    """Return the model of the shipped weights (read once)."""
    return RelevanceModel.load()
