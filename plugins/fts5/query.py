"""A query's text as the ``fts5`` arm's search terms, and those terms as an FTS5 query.

User text never reaches ``MATCH`` as FTS5 syntax: its possessive "'s" is taken off its word
(option ``clitics``), it is split into words by FTS5's own ``unicode61`` tokenizer
(case-folded, diacritics removed, as the index holds them), English stopwords (and, in a
question, its scaffolding) are dropped, and each remaining term is double-quoted, so any
string is a valid query (:func:`query_terms`, :func:`phrases`, :func:`match_expression`).
The arm that searches with them: :mod:`.arm`.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Literal

import apsw

from octomem.engine.words import CLITIC, CLITICS, without_clitics

#: Which clitics a query loses before it is split into words (``Fts5Options.clitics``):
#: none, the "'s" (:data:`~octomem.engine.words.CLITIC`) or all of them
#: (:data:`~octomem.engine.words.CLITICS`).
Clitics = Literal["none", "s", "all"]
_CLITICS = {"s": CLITIC, "all": CLITICS}

#: Lucene's English stop words (``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET``, Apache Lucene,
#: ``org.apache.lucene.analysis.en``), which Pyserini's default English analyzer uses for
#: the BEIR BM25 baselines.
ENGLISH_STOPWORDS: frozenset[str] = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into",
    "is", "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then",
    "there", "these", "they", "this", "to", "was", "will", "with",
})

#: FTS5's own word splitter and folder, as the index is built but without the stemmer:
#: a query's terms are the words the index holds (Python's ``casefold`` turned "Straße"
#: into "strasse" and "İstanbul" into "i" + "stanbul", which FTS5 never indexed).
_FOLD = ("unicode61", [])
_local = threading.local()


def _fold(text: str) -> list[str]:
    """Split ``text`` into words as FTS5's ``unicode61`` does: case folded, diacritics
    removed ("Café" -> "cafe")."""
    tok = getattr(_local, "tokenizer", None)
    if tok is None:
        _local.connection = apsw.Connection(":memory:")
        tok = _local.tokenizer = _local.connection.fts5_tokenizer(*_FOLD)
    data = text.encode("utf-8", "replace")  # a lone surrogate becomes "?", a separator
    return list(tok(data, apsw.FTS5_TOKENIZE_QUERY, None, include_offsets=False,
                    include_colocated=False))


#: Question scaffolding dropped from question-shaped queries (``question_words``): the
#: interrogatives and auxiliaries that open English questions. They name no fact, yet
#: match every turn that asks something ("When did ...?" found questions, not answers).
QUESTION_WORDS: frozenset[str] = frozenset("""
what when where who whom whose which why how did does do doing done has have had would
could should can may might ever been being is are was were
""".split())


def is_question(words: Sequence[str], text: str) -> bool:
    """Return whether a query reads as a question: it ends with ``?`` or its first word is
    one of :data:`QUESTION_WORDS`."""
    return text.rstrip().endswith("?") or bool(words and words[0] in QUESTION_WORDS)


def query_terms(
    text: str, stopwords: bool = True, max_terms: int = 256, question_words: bool = False,
    clitics: Clitics = "s",
) -> list[str]:
    """Split user text into distinct lowercase search terms, in order of first appearance.

    :param text: any string (punctuation, FTS5 operators, NUL bytes and emoji included).
    :param stopwords: drop :data:`ENGLISH_STOPWORDS`.
    :param clitics: drop the clitics after a word before splitting (:data:`Clitics`): "s"
        turns "the user's job" into "user", "job", not a lone "s" that every possessive
        in the index matches (as Lucene's ``EnglishPossessiveFilter`` does in its
        ``EnglishAnalyzer``).
    :param max_terms: keep at most this many terms.
    :param question_words: drop :data:`QUESTION_WORDS` when the query is a question
        (:func:`is_question`).
    :returns: words as FTS5's ``unicode61`` tokenizer splits and folds them (letters,
        digits; everything else separates); empty when none is left.
    """
    terms: dict[str, None] = {}
    words = _fold(without_clitics(text, _CLITICS[clitics]) if clitics != "none" else text)
    drop = QUESTION_WORDS if question_words and is_question(words, text) else frozenset()
    for term in words:
        if (stopwords and term in ENGLISH_STOPWORDS) or term in drop:
            continue
        terms[term] = None
        if len(terms) >= max_terms:
            break
    if not terms and drop:  # nothing but question words: keep them
        return query_terms(text, stopwords, max_terms, question_words=False, clitics=clitics)
    return list(terms)


def match_expression(terms: Sequence[str]) -> str:
    """Return an FTS5 query matching any of ``terms``: ``"t1" OR "t2" ...``.

    Each term is an FTS5 string (double quotes doubled), so no term is read as syntax.
    """
    return " OR ".join(phrases(terms))


def phrases(terms: Sequence[str]) -> list[str]:
    """Quote each term as an FTS5 string (double quotes doubled), so none is read as syntax."""
    return ['"' + t.replace('"', '""') + '"' for t in terms]
