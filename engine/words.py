"""A text's content words, as relevance and the ``conversation`` reranker count them.

:func:`content_words` is the one definition: the words of ``text`` (runs of letters and
digits, casefolded), without :data:`FUNCTION_WORDS`, each with one common English suffix
folded off (:func:`fold`). A word is folded once per process: every later text holding it
reads the folded form from :data:`FOLDED` (a search judges ~10 texts of ~40 words each;
folding every word again was ~60 % of :func:`content_words`' time, 120 -> 70 us per
SciFact chunk of ~280 characters at load 13, the same sets).

Relevance's coverage matches the words by their :func:`root` (a final doubled consonant
undoubled, as the keyword arm's Porter stemmer does: "pinned" holds "pin"); the
``conversation`` reranker's features keep the content words as they are, as they were
fitted (the roots would change 350 of LoCoMo's 1,986 questions' features).
"""

from __future__ import annotations

import re
from functools import lru_cache

#: Words that carry no content in a query: Lucene's English stop words (as the ``fts5``
#: arm) plus the scaffolding of questions and first/second person pronouns.
FUNCTION_WORDS = frozenset("""
a an and are as at be but by for if in into is it no not of on or such that the their
then there these they this to was will with what when where who whom whose which why
how did does do doing done has have had would could should can may might ever been
being were am i me my mine we us our you your yours he him his she her hers its them
about from any some much many
""".split())
#: Words whose absence from a memory says nothing about what it covers, so they are never
#: *unheard* (:func:`~.relevance_features.unheard_words`; they still count in coverage,
#: as the weights were fitted): the Snowball English stop words (Porter's list, as
#: PostgreSQL's ``english.stop`` ships it) and the fillers, politeness and hedges of a
#: question. Trial 16 F8: "who is on call while Marco is away?" lost e^0.5 in odds for
#: "while", and "please", "currently", "exactly" each cost as much as "largemouth".
FILLER_WORDS = FUNCTION_WORDS | frozenset("""
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
she her hers herself it its itself they them their theirs themselves what which who whom
this that these those am is are was were be been being have has had having do does did
doing a an the and but if or because as until while of at by for with about against
between into through during before after above below to from up down in out on off over
under again further then once here there when where why how all any both each few more
most other some such no nor not only own same so than too very s t can will just don
should now
please thanks thank kindly currently exactly actually really just still ever also
perhaps maybe anyway already yet quite probably possibly basically simply precisely
again even else though although whether since till unless within without upon onto
toward towards across along among around behind beside besides beyond despite via per
away lately recently usually always never often sometimes anything something everything
nothing anyone someone everyone somebody anybody one ones thing things
tell told know knew remember remind recall let get got say said like
""".split())
#: A word: a run of letters and digits (Unicode), underscores excluded.
WORD = re.compile(r"[^\W_]+")
#: The English clitic "'s" after a word (' or U+2019): possessive or contracted "is"
#: ("Dana's", "what's"). :data:`WORD` splits "Dana's" into "dana" and "s", and a question's
#: "s" counted as one of its content words (trial 16 F12: "what's Dana's phone number?"
#: had coverage 0.5, its "s" held by every text with a possessive); :func:`query_words`
#: drops it. The other clitics ("I'm", "don't", "we'll") still leave a one- or two-letter
#: word, as the weights and floor were fitted: dropping them too lost one LongMemEval tune
#: question's answer (d24813b1, "I'm thinking of ...": its "m", held by the evidence turn,
#: put it at 0.034, above the floor 0.033; 0.024 without), own kept 0.966 -> 0.931.
CLITIC = re.compile(r"(?<=[^\W_])['\u2019]s(?![^\W_])", re.IGNORECASE)
#: Every English clitic after a word: "'s", "n't"'s "'t", "'d", "'ll", "'m", "'re", "'ve"
#: ("don't", "I'd", "we'll", "I'm", "they're", "I've"), the one- and two-letter fragments
#: that NLTK's English stop word list holds (s, t, d, ll, m, re, ve) as a word splitter
#: leaves them; "O'Driscoll" keeps its "d" (a letter follows).
CLITICS = re.compile(r"(?<=[^\W_])['\u2019](?:s|t|d|ll|m|re|ve)(?![^\W_])", re.IGNORECASE)
SUFFIXES = ("ing", "ed", "es", "s", "ly")
#: Consonants whose final doubling :func:`root` drops: Porter's step 1b keeps a final
#: "ll", "ss" and "zz" ("fall", "miss", "fizz"; Porter, 1980).
UNDOUBLED = frozenset("bcdfghjkmnpqrtvwx")
#: The shortest word whose final "e" :func:`keyword_root` drops (while it is this long):
#: :func:`fold` strips "-es" and "-ed" from words of 5 letters or more, so "notes" and
#: "noted" reach "not" from a base word of 4 ("note"); "the", "use", "one" (3) keep theirs,
#: as their inflections do.
E_DROP_LEAST = 4
#: The shortest word whose final "y" (after a consonant) :func:`keyword_root` makes "i"
#: ("copy" of "copies" -> "copi"; "cry", "sky" keep theirs).
Y_TO_I_LEAST = 4
#: Vowels, for :func:`keyword_root`'s "y" (a "y" after a vowel stays: "play", "key").
VOWELS = frozenset("aeiouy")
#: Distinct words :data:`FOLDED` keeps before it starts over (~100 bytes each).
FOLDED_MAX = 200_000


def fold(word: str) -> str:
    """Strip one common English suffix from words longer than 4 letters when 3 letters or
    more remain ("groups" -> "group", "painted" -> "paint"; "runs" stays): a light
    stand-in for a stemmer, as the relevance weights were fitted with it."""
    if len(word) > 4:
        for suffix in SUFFIXES:
            if word.endswith(suffix) and len(word) - len(suffix) >= 3:
                return word[: -len(suffix)]
    return word


class _Folded(dict[str, str]):
    """A word as it occurs -> its content word (casefolded, :func:`fold`), ``""`` for a
    function word; filled on first sight (``__missing__``), emptied past
    :data:`FOLDED_MAX` words."""

    def __missing__(self, raw: str) -> str:
        word = raw.casefold()
        content = "" if word in FUNCTION_WORDS else fold(word)
        if len(self) >= FOLDED_MAX:
            self.clear()
        self[raw] = content
        return content


#: The process's folded words (:class:`_Folded`).
FOLDED = _Folded()
_NONE = frozenset({""})


@lru_cache(maxsize=4096)
def content_words(text: str) -> frozenset[str]:
    """Return the folded content words of ``text`` (see :data:`FUNCTION_WORDS`)."""
    words = frozenset(map(FOLDED.__getitem__, WORD.findall(text)))
    return words - _NONE if "" in words else words


@lru_cache(maxsize=4096)
def query_words(query: str) -> frozenset[str]:
    """Return the content words a question asks about (relevance's coverage and unheard
    words): :func:`content_words` of ``query`` without its "'s" (:data:`CLITIC`), so
    "what's Dana's phone number?" asks about "dana", "phone" and "number", not "s". The
    ``conversation`` reranker keeps :func:`content_words`, as its weights were fitted."""
    return content_words(without_clitics(query))


def without_clitics(text: str, clitics: re.Pattern[str] = CLITIC) -> str:
    """Return ``text`` without its "'s" (:data:`CLITIC`, or the clitics ``clitics``
    matches, e.g. :data:`CLITICS`): "Dana's" -> "Dana"."""
    return clitics.sub("", text) if "'" in text or "\u2019" in text else text


def root(word: str) -> str:
    """Return a content word with a final doubled consonant undoubled, as Porter's step 1b
    (Porter, 1980; the ``fts5`` arm's stemmer) undoubles after stripping -ed or -ing:
    :func:`fold` leaves "pinned" as "pinn" and "running" as "runn", which "pin" and "run"
    would not match though the keyword arm matches them. "miss", "fall", "buzz", "book",
    "2000" and words of 3 letters ("add" of "added") keep theirs."""
    if len(word) >= 4 and word[-1] == word[-2] and word[-1] in UNDOUBLED:
        return word[:-1]
    return word


def keyword_root(word: str) -> str:
    """Return :func:`root` of a content word, also meeting the inflections the keyword
    arm's Porter stemmer (Porter, 1980) meets and :func:`fold` leaves apart: a final "e"
    dropped (step 5a) while the word keeps :data:`E_DROP_LEAST` letters ("upgrade" and
    "upgraded", folded "upgrad"; "agree" and "agreed", folded "agre", both "agr"), and a
    final "y" after a consonant made "i" (step 1c) in words of :data:`Y_TO_I_LEAST`
    letters or more ("policy" and "policies", folded "polici").

    Only for asking whether a keyword run's entry holds a query's words as the keyword arm
    matched them (:func:`~.relevance_features.whole_query_run`). Relevance's coverage
    keeps :func:`root`: with these folds in coverage the tune splits abstained less where
    nothing answers (LongMemEval --split tune other empty 0.933 -> 0.900, LoCoMo
    conv-26/30/41/42/43 0.982 -> 0.972, own kept unchanged; the weights were fitted on
    :func:`root`; ``benchmarks/results/abstention/keyword-root/``)."""
    word = root(word)
    if len(word) >= E_DROP_LEAST and word[-1] == "e":
        while len(word) >= E_DROP_LEAST and word[-1] == "e":
            word = word[:-1]
        return word
    if len(word) >= Y_TO_I_LEAST and word[-1] == "y" and word[-2] not in VOWELS:
        return word[:-1] + "i"
    return word


@lru_cache(maxsize=4096)
def keyword_roots(text: str) -> frozenset[str]:
    """Return :func:`keyword_root` of each of ``text``'s content words."""
    return frozenset(map(keyword_root, content_words(text)))


@lru_cache(maxsize=4096)
def roots(text: str) -> frozenset[str]:
    """Return :func:`root` of each of ``text``'s content words (relevance's coverage)."""
    return frozenset(map(root, content_words(text)))
