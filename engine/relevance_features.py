"""The features a hit's relevance is computed from, each on a scale that does not depend
on the query or the store (the calibrated model over them: :mod:`octomem.engine.relevance`).

- :func:`coverage`: the share of the query's content words a hit's title and text hold;
- :func:`unheard_words`: an answer's query words the reachable memory never mentions;
- :func:`about_asker` and :func:`aside`: an assistant's turn answering a question about
  its asker's own life;
- :class:`RunStats` (:func:`run_stats`): what the query's runs over the store look like,
  for a document hit's ``cos_lift`` and ``kw_z``, and whether they are a background;
- :func:`keyword_strength`: how strongly the store's best keyword match holds the query's
  words, in units of the rarest word's idf (an answer's, for turns and statements).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from .chunking import embedding_text
from .small_store import short_run
from .words import FILLER_WORDS, content_words, query_words, without_clitics
from .words import WORD as _WORD
from .words import keyword_root as _keyword_root
from .words import keyword_roots as _keyword_roots
from .words import root as _root
from .words import roots as _roots

#: At most this many unheard words count in a relevance (:func:`unheard_words`). In a
#: small store most everyday words are unheard, so a paraphrase would pay for each; on the
#: tune splits (LoCoMo conv-26/30/41/42/43, LongMemEval --split tune, every other group as
#: negatives, benchmarks/fit_turn_relevance.py) caps of 2, 3 and none choose the same
#: weight and floor with the same figures (own kept / other empty LME 96.6/89.8, LoCoMo
#: 95.2/95.7); a cap of 1 gives LME 96.6/89.4, LoCoMo 97.1/94.7 (further from the targets).
UNHEARD_CAP = 2

#: The words a question speaks of its asker by (:func:`about_asker`, and the
#: ``conversation`` reranker's ``impersonal``). LongMemEval's questions (28 of its 30 tune
#: questions) ask the user about their own life ("where did I ...", "my ..."): the
#: user/assistant weights were fitted on such questions, where the user's own short turn
#: holds the fact and the assistant's reply only repeats it.
FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself"})
#: The words a question names the assistant by ("what did you suggest ..."): in
#: LongMemEval's tune split they occur in all 5 single-session-assistant questions
#: (the evidence is the assistant's turn) and in none of the 25 others.
ADDRESSED_AS = frozenset({"you", "your", "yours"})
#: The metadata key and value of an assistant's turn (transcript ingest writes them).
ROLE, ASSISTANT = "role", "assistant"


def unheard_words(query: str, held: Iterable[str], present: Callable[[str], bool]) -> int:
    """Return how many of ``query``'s content words (:func:`content_words`; not the
    :data:`~.words.FILLER_WORDS`, "while", "please", "currently") the memory
    never mentions: no text of ``held`` (the answer's hits) holds the word, and
    ``present`` is false for each of its spellings in the query ("planning" for
    "plann"). ``present(word)`` says whether any stored chunk the query can reach holds
    ``word`` (the keyword arm finds one under the query's filters). The query's "'s" is
    no word of it (:func:`~.words.query_words`: "Dana's" is "Dana")."""
    query = without_clitics(query)
    words = query_words(query) - _fillers(query)
    if not words:
        return 0
    missing = set(words)
    for text in held:
        missing -= content_words(text)
        if not missing:
            return 0
    spellings: dict[str, list[str]] = {}
    for raw in _WORD.findall(query):
        for word in content_words(raw) & missing:
            spellings.setdefault(word, []).append(raw)
    return sum(not any(present(raw) for raw in spellings.get(word, [word]))
               for word in missing)


@lru_cache(maxsize=4096)
def _fillers(query: str) -> frozenset[str]:
    """Return the content words of ``query`` that only :data:`~.words.FILLER_WORDS` spell
    there (never unheard)."""
    spelled: dict[str, bool] = {}
    for raw in _WORD.findall(query):
        for word in content_words(raw):
            spelled[word] = spelled.get(word, True) and raw.casefold() in FILLER_WORDS
    return frozenset(w for w, filler in spelled.items() if filler)


@lru_cache(maxsize=4096)
def about_asker(query: str) -> bool:
    """Return whether ``query`` speaks of its asker (a word of :data:`FIRST_PERSON`)
    without addressing the assistant (no word of :data:`ADDRESSED_AS`): "where did I
    stay in Hawaii?", not "what did you tell me about Hawaii?"."""
    words = {w.casefold() for w in _WORD.findall(query)}
    return bool(words & FIRST_PERSON) and not words & ADDRESSED_AS


#: The ``source`` a coding agent's transcript turns carry (Claude Code sessions,
#: ``engine/memory/claude_code.py``): :func:`aside` leaves them alone.
CODING_AGENT_SOURCES = frozenset({"claude-code"})


def aside(query: str, metadata: Any) -> bool:
    """Return whether a hit with chunk ``metadata`` is an assistant's turn answering a
    question about its asker (:func:`about_asker`): its relevance takes
    ``RelevanceModel.aside``. Not a coding agent's turn (``source`` in
    :data:`CODING_AGENT_SOURCES`): there the assistant does the user's work, and "how did
    I fix the flaky test?" is answered by its turn (trial 16 F21: the fix, first in the
    keyword run, 5th behind unrelated notes)."""
    return (isinstance(metadata, Mapping) and metadata.get(ROLE) == ASSISTANT
            and metadata.get("source") not in CODING_AGENT_SOURCES and about_asker(query))


def coverage(query: frozenset[str], text: str) -> float:
    """Return the share (0..1) of ``query``'s content words that ``text`` holds, a word
    held in any inflection the keyword arm matches that :func:`~.words.root` tells ("pin"
    by "pinned"); 0 for a query without content words."""
    if not query:
        return 0.0
    held = _roots(text)
    return sum(_root(word) in held for word in query) / len(query)


@dataclass(frozen=True, slots=True)
class RunStats:
    """What a query's runs over the store look like, for a document hit's relevance.

    :param cos_mean: mean cosine of the semantic arm's run (``None``: no semantic run).
    :param kw_mean: mean keyword score of the keyword arm's run (0 when empty).
    :param kw_std: their standard deviation (0 when fewer than two).
    :param background: whether the runs are full, a background for the document weights
        (:mod:`octomem.engine.relevance`); ``False``: a document's hit gets the turn
        weights and floor.
    :param reach: the semantic run's length when shorter than asked (:func:`short_run`).
    :param kw_entries: how many entries the keyword run held (before any padding, at
        most ``k``): 1 when one chunk alone holds any of the query's words.
    """

    cos_mean: float | None = None
    kw_mean: float = 0.0
    kw_std: float = 0.0
    background: bool = True
    reach: int | None = None
    kw_entries: int = field(default=0, compare=False)  # a count beside the statistics

    def kw_z(self, score: float | None) -> float:
        """Return ``(score - kw_mean) / kw_std`` (``score`` ``None``: the hit is not in
        the keyword run, scored 0); 0 when the run has no spread."""
        if self.kw_std <= 0.0:
            return 0.0
        return ((score or 0.0) - self.kw_mean) / self.kw_std


def judged_depth(candidate_k: int, asked: int) -> int:
    """Return how many of each run's entries a hit's relevance is judged against: the
    first ``candidate_k`` (``retrieval.candidate_k``, the depth the weights were fitted
    at), or fewer when the arms were asked for fewer (``asked``: one arm's RRF run stops
    at the answer's depth). A larger ``top_k`` makes the arms return longer runs; their
    entries past ``candidate_k`` are not part of the background, so a hit's relevance, and
    whether an answer abstains, do not depend on ``top_k`` (trial 16 F16: the same note
    scored 0.025, 0.30 and 0.73 at ``top_k`` 10, 300 and 1,000, its run's mean cosine and
    keyword spread taken over 100, 300 and 1,000 neighbours)."""
    return min(candidate_k, asked)


def run_stats(cosines: Sequence[float], keyword_scores: Sequence[float],
              k: int | None = None, covered: bool = False) -> RunStats:
    """Return the :class:`RunStats` of a semantic run's scores (cosines) and a keyword
    run's scores (higher is better), each in any order.

    :param k: how many entries each arm was asked for (``candidate_k``); the runs are a
        background when the semantic run (the keyword run when there is no semantic run)
        holds at least ``k``: the store held more than the run. ``None``: assumed full.
        In a background, a keyword run shorter than ``k`` is padded with zeros to ``k``:
        the store's other chunks match no query word, and their BM25 is 0. Without it a
        word only one file holds, asked alone, made a run of one hit, no spread and a
        ``kw_z`` of 0 for that file, which then fell under the floor (trial 10: "QY0003"
        abstained where "token QY0003", whose common word fills the run with zeros,
        found it). Of SciFact train's 809 claims, whose runs the weights were fitted on,
        8 have a keyword run shorter than 100 (2 to 95 hits); the weights were not refit.
        Only each run's ``k`` best entries count (:func:`judged_depth`: a run asked for
        more, for a larger ``top_k``, is judged as the run of ``k``). Nor are the runs a
        background when the keyword run is *saturated*: it holds ``k`` entries (more than
        one) that all score as its best one, so at least ``k`` chunks match the query's
        words exactly as well as the best (a folder of templated tickets or generated
        notes: trial 16 F16, 104 of 1,000 notes "the kafka instance N was restarted"). The
        run is then the query's matches, not their neighbourhood; no hit can stand out of
        it (``kw_z`` 0, ``cos_lift`` a few hundredths) and every answer was rejected
        (relevance 0.025 for a cosine of 0.80 holding the query's words). No constant:
        exact ties, which a SciFact run (the fit's condition) never has in its 100 entries.
    :param covered: the keyword run's ``k``-th entry holds every content word of the
        query (:func:`whole_query_run`): the run is saturated too, its scores tied or not.
    """
    if k is not None:
        cosines = sorted(cosines, reverse=True)[:k]
        keyword_scores = sorted(keyword_scores, reverse=True)[:k]
    cos_mean = sum(cosines) / len(cosines) if cosines else None
    held = len(cosines) if cosines else len(keyword_scores)
    entries = len(keyword_scores)
    if k is not None and held >= k and len(keyword_scores) < k:
        keyword_scores = [*keyword_scores, *[0.0] * (k - len(keyword_scores))]
    n = len(keyword_scores)
    mean = sum(keyword_scores) / n if n else 0.0
    std = math.sqrt(sum((x - mean) ** 2 for x in keyword_scores) / n) if n > 1 else 0.0
    return RunStats(cos_mean, mean, std,
                    (k is None or held >= k) and not saturated(keyword_scores, k, covered),
                    short_run(len(cosines), k) if cosines else None, entries)


def saturated(keyword_scores: Sequence[float], k: int | None, covered: bool = False) -> bool:
    """Return whether a keyword run asked for ``k`` entries holds ``k`` (> 1) that all
    score as its best one, which is above 0, or ``k`` whose last one holds every content
    word of the query (``covered``, :func:`whole_query_run`) (:func:`run_stats`: then no
    background)."""
    if k is None or k < 2 or len(keyword_scores) < k:
        return False
    best = sorted(keyword_scores, reverse=True)[:k]
    return best[0] > 0.0 and (covered or best[-1] == best[0])


def whole_query_run(query: str, run: Iterable[Any], k: int | None,
                    text_of: Callable[[int], str | None]) -> bool:
    """Return whether the keyword run ``run`` (an arm's :class:`~.types.Hit` s, any order)
    holds at least ``k`` (> 1) entries scored above 0 and the ``k``-th best one's title and
    text (``text_of(chunk_id)``; ``None``: unknown) hold every content word of ``query``
    in an inflection the keyword arm matched (:func:`~.words.keyword_root`: "upgrade" by
    "upgraded"): at least ``k`` chunks match the whole query, so the run is the query's
    matches, not their neighbourhood (:func:`saturated`).

    Trial 17 G13: 179 of 10,000 templated tickets say "the redis cluster was upgraded by
    …"; their BM25 scores took two values (a follow-up naming redis again), so the exact
    ties :func:`saturated` asked for never came, and "who upgraded the redis cluster?"
    abstained (0.067) on a note of cosine 0.80 holding every query word, judged against
    its twins. No constant: on SciFact train (the document weights' fit, 808 claims whose
    keyword run holds 100 entries) no run's 100th entry holds every word of its claim,
    with or without the claim's evidence (at most 2/3; ``benchmarks/results/
    conversations/h21sat/``), so the fit's condition and SciFact's figures are unchanged.
    Costs one chunk read by id (recall: only when a document's hit is judged). With
    :func:`~.words.root` alone "redis upgrade" held half its words in "the redis cluster
    was upgraded" and abstained (0.036); no SciFact train run's 100th entry holds its whole
    claim by :func:`~.words.keyword_root` either (``benchmarks/results/abstention/
    keyword-root/``)."""
    if k is None or k < 2:
        return False
    ranked = sorted(run, key=lambda hit: -hit.score)
    if len(ranked) < k or ranked[k - 1].score <= 0.0:
        return False
    words = content_words(query)
    text = text_of(ranked[k - 1].chunk_id) if words else None
    return text is not None and {_keyword_root(w) for w in words} <= _keyword_roots(text)


def stored_text(storage: Any) -> Callable[[int], str | None]:
    """Return ``chunk_id -> the chunk's title and text`` (:func:`~.chunking.embedding_text`)
    read from ``storage`` (``None``: no such chunk), for :func:`whole_query_run`."""
    def text_of(chunk_id: int) -> str | None:
        chunks = storage.get_chunks([chunk_id])
        return embedding_text(chunks[0]) if chunks else None
    return text_of


def keyword_strength(top_score: float | None, chunks: int) -> float | None:
    """Return an answer's keyword strength: the best BM25 score of its keyword run
    (``top_score``; ``None`` or an empty run: 0) divided by ``ln(chunks)``, the idf
    (Robertson-Sparck Jones, as FTS5's ``bm25()`` computes it) of a word only one of the
    store's ``chunks`` holds, so that the same match scores the same in a store of 500
    turns and one of 50,000: 1.0 is one such word matched at an average length, 0 no
    query word in the memory the query can reach. ``None`` when ``chunks < 2`` (no idf).

    LongMemEval's questions asked of another question's haystack that pass the floor
    match a turn on their topic ("Spotify", "Hawaii") by meaning and a word or two; an
    own question's evidence turn usually holds several of its rarer words as well. On
    the tune splits (``benchmarks/fit_strength.py``) the strength separates the
    two beside the hit's cosine and coverage (AUC 0.947 LongMemEval, 0.955 LoCoMo for the
    raw top score alone; the turns' relevance gains ``w · (strength - centre)``,
    ``keyword_strength`` in ``relevance.json``)."""
    if chunks < 2:
        return None
    return max(top_score or 0.0, 0.0) / math.log(chunks)


def indexed_rows(arms: Any) -> int:
    """Return the rows the keyword arm of ``arms`` computes its idf over: its
    ``row_count()`` when it has one (``fts5``: FTS5's own N, one read), else the
    storage's chunk count."""
    count = getattr(arms.keyword, "row_count", None)
    return int(count()) if callable(count) else int(arms.storage.counts()["chunks"])
