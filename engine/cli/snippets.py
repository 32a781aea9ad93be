"""The part of a hit's text the hit list shows: from the sentence that best matches the
query, so a long document or turn shows where it answers rather than its first words (the
whole text: ``--json``). A line break ends a sentence too, and so does the space before
a Markdown heading (a chunk packed from paragraphs can hold a closing code fence and the
next heading on one line): a heading, a list item or a paragraph without a full stop is
a part of its own.

A part's match is the sum of the weights of the query's words it holds, a word weighing
more the fewer of the text's parts hold it: the inverse sentence frequency of TF-ISF
(Neto et al., "Document clustering and text summarization", PADD 2000), smoothed as
``ln(1 + S / s_w)`` for ``S`` parts, ``s_w`` of them holding the word. So the sentence
holding "RF-22" outranks a heading or a SQL line that repeats "refunds" (trial 17 G2).
"""

from __future__ import annotations

import math
import re

from ..words import FILLER_WORDS, content_words, root

#: Letters of a word's root compared with the query's (a crude stem: ``deploys`` meets
#: ``deployment``, ``escalate`` meets ``escalation``). Not tuned: long enough to tell most
#: words apart.
STEM_CHARS = 5
_PART_END = re.compile(r"(?<=[.!?])\s+|\s*\n\s*|\s+(?=#{1,6}\s)")
_HEADING = re.compile(r"#{1,6}\s")


def stems(text: str) -> frozenset[str]:
    """Return the crude stems of ``text``'s content words (:func:`~octomem.engine.words.
    content_words`, their :func:`~octomem.engine.words.root` cut to :data:`STEM_CHARS`)."""
    return frozenset(root(w)[:STEM_CHARS] for w in content_words(text))


def _query_stems(query: str) -> frozenset[str]:
    """The stems of ``query``'s content words that say what it asks for (no fillers:
    "please", "tell", "know")."""
    return frozenset(root(w)[:STEM_CHARS] for w in content_words(query)
                     if w not in FILLER_WORDS)


def best_part(text: str, query: str) -> str:
    """Return ``text`` from its part (sentence, line or heading) that best matches
    ``query``, with ``… `` in front when that is not the first part; ``text`` unchanged
    when no part holds a query word or the first part matches best.

    A part scores the sum of ``ln(1 + S / s_w)`` over the query words ``w`` it holds
    (``S`` parts, ``s_w`` of them holding ``w``; see the module's docstring). Of parts
    that score alike, a sentence goes before a heading (the heading names the section,
    the sentence answers: "## Restarting the ledger worker" and "To restart the ledger
    worker run ..." hold the same words), then the earlier part.

    :param text: the text as stored (line breaks end parts; the caller folds whitespace
        after).
    """
    wanted = _query_stems(query)
    if not wanted:
        return text
    starts = [0] + [m.end() for m in _PART_END.finditer(text) if m.end() < len(text)]
    if len(starts) == 1:
        return text
    ends = starts[1:] + [len(text)]
    held = [stems(text[a:b]) & wanted for a, b in zip(starts, ends, strict=True)]
    weight = {w: math.log1p(len(held) / n)
              for w in wanted if (n := sum(w in h for h in held))}
    scores = [sum(weight[w] for w in h) for h in held]
    best = max(range(len(scores)),
               key=lambda i: (round(scores[i], 9), not _HEADING.match(text, starts[i]), -i))
    if best == 0 or scores[best] == 0:
        return text
    return "… " + text[starts[best]:]
