"""What a hit's score means to a caller: a relevance in [0, 1], comparable across queries.

Fused scores (RRF) and reranker scores are ranks in disguise: the best hit of a query
about something never stored scores as high as the best hit of a good query. Relevance
is instead a calibrated probability that the hit answers the query, from features whose
scale does not depend on the query or the store:

- ``cos``: the hit's cosine similarity to the query (the semantic arm's own scale);
- ``coverage``: the share of the query's content words (stop words and question
  scaffolding dropped, light suffix folding) found in the hit's title and text.

``p = 1 / (1 + exp(-(w_cos·cos + w_cov·coverage + w_both·cos·coverage + bias)))`` —
logistic regression (Cox, 1958), fitted by ``benchmarks/fit_ranking.py`` on tune
splits only; the weights are data (``relevance.json`` beside this module). A cosine
means something only for the embedder it was fitted with (``embedder``, a model id
prefix: the shipped MiniLM); without a semantic arm, for a hit without a vector, or with
another embedder, the keyword-only weights (coverage alone) apply.

An answer whose best relevance is below ``retrieval.relevance_floor`` is empty, with a
reason (abstention): nothing stored answers the query.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

#: The weights shipped with the package.
WEIGHTS_FILE = Path(__file__).with_name("relevance.json")
#: Words that carry no content in a query: Lucene's English stop words (as the ``fts5``
#: arm) plus the scaffolding of questions and first/second person pronouns.
FUNCTION_WORDS = frozenset("""
a an and are as at be but by for if in into is it no not of on or such that the their
then there these they this to was will with what when where who whom whose which why
how did does do doing done has have had would could should can may might ever been
being were am i me my mine we us our you your yours he him his she her hers its them
about from any some much many
""".split())
_WORD = re.compile(r"[^\W_]+")
_SUFFIXES = ("ing", "ed", "es", "s", "ly")

Band = Literal["high", "medium", "low"]
#: Lowest relevance of a ``high`` hit: more likely than not to answer the query (the
#: probability is calibrated on the tune splits, so 0.5 means what it says).
HIGH = 0.5


def _fold(word: str) -> str:
    """Strip one common English suffix from words longer than 4 letters when 3 letters or
    more remain ("groups" -> "group", "painted" -> "paint"; "runs" stays): a light
    stand-in for a stemmer, as the relevance weights were fitted with it."""
    if len(word) > 4:
        for suffix in _SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                return word[: -len(suffix)]
    return word


@lru_cache(maxsize=4096)
def content_words(text: str) -> frozenset[str]:
    """Return the folded content words of ``text`` (see :data:`FUNCTION_WORDS`)."""
    return frozenset(_fold(w) for w in (x.casefold() for x in _WORD.findall(text))
                     if w not in FUNCTION_WORDS)


def coverage(query: frozenset[str], text: str) -> float:
    """Return the share (0..1) of ``query``'s content words that ``text`` holds; 0 for a
    query without content words."""
    if not query:
        return 0.0
    return len(query & content_words(text)) / len(query)


@dataclass(frozen=True, slots=True)
class RelevanceModel:
    """Logistic weights ``(w_cos, w_cov, w_both, bias)`` with and without a cosine, and
    the model id prefix of the embedder whose cosines they were fitted on."""

    hybrid: tuple[float, float, float, float]
    keyword: tuple[float, float]
    embedder: str = ""

    def fits(self, model_id: str | None) -> bool:
        """Return whether cosines of the embedder ``model_id`` are the ones fitted on."""
        return bool(model_id) and str(model_id).startswith(self.embedder)

    @classmethod
    def load(cls, path: Path = WEIGHTS_FILE) -> RelevanceModel:
        """Read a weights file written by ``benchmarks/fit_relevance.py``.

        :raises OSError: unreadable. :raises KeyError: a weight set is missing.
        """
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(tuple(data["hybrid"]), tuple(data["keyword"]),  # type: ignore[arg-type]
                   str(data.get("embedder", "")))

    def probability(self, cos: float | None, cov: float) -> float:
        """Return the relevance in [0, 1] of a hit with cosine ``cos`` (``None`` or NaN
        when unknown) and coverage ``cov``; non-decreasing in both over cos in [-1, 1]
        and cov in [0, 1] when ``w_cos, w_cov >= |w_both|`` (the shipped weights are)."""
        if cos is None or math.isnan(cos):
            w_cov, bias = self.keyword
            z = w_cov * cov + bias
        else:
            w_cos, w_cov, w_both, bias = self.hybrid
            z = w_cos * cos + w_cov * cov + w_both * cos * cov + bias
        return 1.0 / (1.0 + math.exp(-max(min(z, 50.0), -50.0)))


@lru_cache(maxsize=1)
def shipped_model() -> RelevanceModel:
    """Return the model of the shipped weights (read once)."""
    return RelevanceModel.load()


def band(p: float, floor: float) -> Band:
    """Return ``"high"`` (>= :data:`HIGH`), ``"medium"`` (>= ``floor``, the
    ``retrieval.relevance_floor``) or ``"low"`` (below the floor: shown only because a
    better hit of the same answer passed it)."""
    return "high" if p >= HIGH else "medium" if p >= floor else "low"


@dataclass(frozen=True, slots=True)
class Relevance:
    """A hit's relevance and how it was reached (for ``explain``).

    :param probability: in [0, 1].
    :param cos: cosine to the query, ``None`` when unknown.
    :param coverage: share of the query's content words the hit holds.
    """

    probability: float
    band: Band
    cos: float | None
    coverage: float


def relevance_of(query: str, text: str, cos: float | None, floor: float,
                 model: RelevanceModel | None = None, embedder: str | None = None) -> Relevance:
    """Return the :class:`Relevance` of a hit whose title and text are ``text``.

    :param cos: the hit's cosine to the query; ``None`` or NaN when unknown.
    :param floor: ``retrieval.relevance_floor`` (for the band).
    :param embedder: the model id of the embedder ``cos`` comes from; a cosine of an
        embedder the model was not fitted on is not used (:meth:`RelevanceModel.fits`).
    """
    model = model or shipped_model()
    cov = coverage(content_words(query), text)
    if cos is None or math.isnan(cos) or not model.fits(embedder):
        cos = None
    p = model.probability(None if cos is None else float(cos), cov)
    return Relevance(p, band(p, floor), None if cos is None else float(cos), cov)


def abstain_reason(best: float, floor: float) -> str:
    """Say why an answer is empty: its best hit's relevance is below the floor."""
    return (f"nothing stored answers this (the best match's relevance {best:.3f} is below "
            f"retrieval.relevance_floor {floor:g})")
