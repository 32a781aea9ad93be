"""The ``grep`` baseline: a keyword arm that ranks by substring matches, like ``grep -i -F``.

Registered in process by the benchmark runner only (no entry point): it is the row that
shows what retrieval adds over searching for the words. A chunk's score is the number of
distinct query words (the ``fts5`` arm's word split, Lucene's English stop words
dropped) that occur in its title or text as case-insensitive substrings; ties keep
storage order (ascending chunk id). No stemming, no term weighting, no length
normalisation. It scans every stored chunk in Python on each query.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from octomem.engine.arms import ArmContext, ArmSpec, NoOptions
from octomem.engine.hookspecs import hookimpl
from octomem.engine.types import Chunk, Filters, Hit, Run

NAME = "grep"
_WORD = re.compile(r"[^\W_]+")
#: Lucene's English stop words (``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET``).
STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with".split()
)


def grep_terms(text: str) -> list[str]:
    """Return the distinct lowercase words of ``text`` minus stop words, in order."""
    words = (w for w in _WORD.findall(text.casefold()) if w not in STOPWORDS)
    return list(dict.fromkeys(words))


class GrepArm:
    """Substring-count ranking over every stored chunk (in-memory copy of the texts).

    :param storage: any storage; its chunks are read again whenever its counts change
        or this arm is asked to index or remove chunks.
    """

    name = NAME

    def __init__(self, storage: Any) -> None:
        self.storage = storage
        self._chunks: list[Chunk] = []
        self._texts: list[str] = []
        self._signature: tuple[int, int] | None = None
        self._dirty = True

    def index(self, tx: Any, chunks: Sequence[Chunk]) -> None:
        """Mark the in-memory copy stale (it is re-read on the next search)."""
        self._dirty = True

    def remove(self, tx: Any, chunk_ids: Sequence[int]) -> None:
        """Mark the in-memory copy stale."""
        self._dirty = True

    def _refresh(self) -> None:
        counts = self.storage.counts()
        signature = (counts["documents"], counts["chunks"])
        if not self._dirty and signature == self._signature:
            return
        self._chunks = list(self.storage.iter_chunks())
        self._texts = [f"{c.title or ''}\n{c.text}".casefold() for c in self._chunks]
        self._signature, self._dirty = signature, False

    def search(self, text: str, filters: Filters, k: int) -> Run:
        """Return the ``k`` chunks passing ``filters`` containing the most query words.

        :returns: hits best first, score = number of distinct query words found (>= 1),
            ties by ascending chunk id; empty when ``text`` has no word.
        """
        terms = grep_terms(text)
        if not terms or k < 1:
            return []
        self._refresh()
        scored = []
        for chunk, body in zip(self._chunks, self._texts, strict=True):
            if not filters.matches(chunk):  # superseded chunks fail the default view
                continue
            found = sum(1 for t in terms if t in body)
            if found:
                scored.append((-found, chunk.id))
        scored.sort()
        return [
            Hit(chunk_id=cid, score=float(-neg), rank=i, arm=NAME)
            for i, (neg, cid) in enumerate(scored[:k], start=1)
        ]


def build(options: NoOptions, context: ArmContext) -> GrepArm:
    """Build the arm over ``context.storage``."""
    return GrepArm(context.storage)


@hookimpl
def octomem_register_keyword_arms() -> list[ArmSpec]:
    """Offer the ``grep`` substring baseline (benchmark runner only)."""
    return [
        ArmSpec(
            kind="keyword",
            name=NAME,
            factory=build,
            description="substring baseline: count of query words found (bench only)",
        )
    ]
