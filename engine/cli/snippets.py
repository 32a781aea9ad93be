"""The part of a hit's text the compact hit list shows: from the sentence that holds
most of the query's words, so a long document or turn shows where it answers rather
than its first words (the whole text: ``--json``; more lines: ``--explain``). A line
break ends a sentence too: a Markdown heading, a list item or a paragraph without a
full stop is a part of its own."""

from __future__ import annotations

import re

#: Words too common to say where a text answers (English; the keyword arm's own language).
STOPWORDS = frozenset(
    "the and for are was were with that this what when where which who how why does did "
    "has have had not but you your our its from into about there their they them then than "
    "can could should would will shall may might all any some".split())
#: Letters of a word compared with the query's (a crude stem: ``deploys`` meets
#: ``deployment``). Not tuned: long enough to tell most words apart.
STEM_CHARS = 5
_WORD = re.compile(r"\w+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n\s*")


def stems(text: str) -> set[str]:
    """The crude stems of ``text``'s words of 3 letters or more, stopwords left out."""
    return {w[:STEM_CHARS] for w in _WORD.findall(text.lower())
            if len(w) >= 3 and w not in STOPWORDS}


def best_part(text: str, query: str) -> str:
    """Return ``text`` from its sentence holding most distinct query stems on, with
    ``… `` in front when that is not the first sentence; ``text`` unchanged when no
    later sentence holds more than the first.

    :param text: the text as stored (line breaks end parts; the caller folds whitespace
        after).
    """
    wanted = stems(query)
    if not wanted:
        return text
    starts = [0] + [m.end() for m in _SENTENCE_END.finditer(text)]
    if len(starts) == 1:
        return text
    ends = starts[1:] + [len(text)]
    scores = [len(stems(text[a:b]) & wanted) for a, b in zip(starts, ends, strict=True)]
    best = max(range(len(scores)), key=lambda i: (scores[i], -i))
    if best == 0 or scores[best] == scores[0]:
        return text
    return "… " + text[starts[best]:]
