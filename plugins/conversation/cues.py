"""What a question says about whose turn answers it, for the ``conversation`` reranker.

:func:`recalls_assistant`: it refers to the assistant's own earlier words ("you
suggested ..."); :func:`impersonal`: it neither speaks of its asker nor addresses the
assistant, so either speaker's turn may answer. The reranker's features over the
candidates: :mod:`.features`.
"""

from __future__ import annotations

import re

from octomem.engine.relevance import ADDRESSED_AS, FIRST_PERSON

#: A word: a run of letters and digits (also :mod:`.features`' word count).
WORD = re.compile(r"[^\W_]+")
#: Irregular English past forms that, after "you", say the assistant already did or
#: said something ("you told me", "the script you wrote"); regular ones end in "-ed".
IRREGULAR_PAST = frozenset({
    "said", "told", "gave", "wrote", "made", "sent", "showed", "shown", "thought", "found",
    "got", "chose", "drew", "built", "took", "meant", "brought", "taught", "spoke", "knew",
    "came", "put", "set", "left", "did", "had", "went", "read", "ran", "saw", "won"})
#: "you" and the two words after it ("you told me", "you also said"), or "did you".
_RECALLS = re.compile(r"\b(?:you\s+(\w+)(?:\s+(\w+))?|did\s+you)\b", re.IGNORECASE)


def _past(word: str | None) -> bool:
    word = (word or "").casefold()
    return word.endswith("ed") or word in IRREGULAR_PAST


def recalls_assistant(query: str) -> bool:
    """Return whether ``query`` refers to the assistant's own earlier words ("you
    suggested ...", "what did you say ...", "the list you provided"): "you" followed,
    directly or after one word ("you also said"), by a verb in the past (ending in "-ed"
    or one of :data:`IRREGULAR_PAST`), or "did you". A request ("can you recommend ...")
    does not.
    """
    for match in _RECALLS.finditer(query):
        first, second = match.group(1), match.group(2)
        if first is None or _past(first) or _past(second):
            return True
    return False


def impersonal(query: str) -> bool:
    """Return whether ``query`` neither speaks of its asker (:data:`FIRST_PERSON`) nor
    addresses the assistant (:data:`ADDRESSED_AS`): a question about the subject matter
    ("why did the uploads fail?"), which either speaker's turn may answer."""
    words = {w.casefold() for w in WORD.findall(query)}
    return not (words & FIRST_PERSON or words & ADDRESSED_AS)
