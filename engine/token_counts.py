"""Token counts of one write batch, taken once, and the texts that need no count at all.

The chunker needs a text's token count only to learn whether the text fits its budget
(otherwise it is split, and the pieces are counted). An embedder that knows a cheap upper
bound of its counts (:class:`~octomem.engine.arms.TokenCeilings`; for BERT WordPiece, a
text's characters other than spaces, three per character beyond ASCII, refined word by
word against the vocabulary when that is over budget) lets a text whose bound is within
its budget be stored whole without counting it: the chunks are the same as with the exact
count, since ``split_text`` keeps any text within budget whole. Counting was ~35 % of
ingest excluding embedding (10k documents of ``benchmarks/results/peers/ingest-10k.md``);
94 % of those texts are within budget by their ceiling (counting 0.74-0.79 -> 0.37-0.44 s
CPU, load ~10).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .chunking import CountTokens
from .types import Document

Ceilings = Callable[[Sequence[str]], list[int | None]]


def title_budget(budget: int, title_tokens: int) -> int:
    """Return a text's budget beside a title of ``title_tokens`` tokens: a long title
    leaves the text at least half of ``budget``."""
    return max(budget // 2, budget - title_tokens)


class BatchCounts:
    """A token counter for one batch of documents: the texts that may not fit and their
    titles counted in one call, other texts counted as asked (and remembered).

    :param count: the embedder's exact counter (or the word estimate).
    :param budget: tokens per chunk (before a title takes its share).
    :param ceilings: the embedder's :meth:`~octomem.engine.arms.TokenCeilings.token_ceilings`,
        or ``None`` (every text is counted).
    :param documents: the batch.
    """

    def __init__(self, count: CountTokens, budget: int, ceilings: Ceilings | None,
                 documents: Sequence[Document]) -> None:
        self._count = count
        # one call for the texts and the titles there are (most documents have none)
        titled = [d.title for d in documents if d.title]
        bounds = ceilings([*(d.text for d in documents), *titled]) \
            if ceilings is not None else None
        title_bounds = iter(bounds[len(documents):] if bounds else ())
        #: (text, title) of the documents whose text surely fits beside its title
        self._whole: set[tuple[str, str | None]] = set()
        pending: list[str] = []
        if bounds and not titled:  # the common batch: no title, the whole budget each
            self._untitled(documents, bounds, budget, pending)
            documents = ()
        for i, doc in enumerate(documents):
            bound = bounds[i] if bounds else None
            title = next(title_bounds) if bounds and doc.title else None
            # a title's ceiling leaves no more room than its count: the test stays sound
            room = budget if not doc.title else budget // 2 if title is None else \
                title_budget(budget, title)
            if bound is not None and bound <= room and doc.text and not doc.text.isspace():
                self._whole.add((doc.text, doc.title))
            else:
                pending.extend((doc.text, doc.title or ""))
        texts = [t for t in dict.fromkeys(pending) if t]
        self._known = dict(zip(texts, count(texts), strict=True)) if texts else {}

    def _untitled(self, documents: Sequence[Document], bounds: Sequence[int | None],
                  budget: int, pending: list[str]) -> None:
        """Sort a batch of documents without titles as ``__init__``'s loop would (each
        text's room the whole ``budget``), with less to do per document (the 10k ingest
        benchmark: ~1 -> ~0.5 us each)."""
        whole = self._whole
        for doc, bound in zip(documents, bounds, strict=True):
            text = doc.text
            if bound is not None and bound <= budget and text and not text.isspace():
                whole.add((text, doc.title))  # None, or "" (no title either)
            else:
                pending.append(text)

    def __call__(self, texts: Sequence[str]) -> list[int]:
        """Return each text's exact count (counted now unless known)."""
        known = self._known
        missing = [t for t in dict.fromkeys(texts) if t not in known]
        if missing:
            known.update(zip(missing, self._count(missing), strict=True))
        return [known[t] for t in texts]

    def fits(self, document: Document) -> bool:
        """True when ``document``'s text is within its budget by its ceiling alone (one
        chunk: its text, stripped)."""
        return (document.text, document.title) in self._whole
