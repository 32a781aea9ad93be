"""``content_words`` with its per-word memo gives the sets of the plain definition (every
word casefolded, function words dropped, one suffix folded), on the repository's docs."""

from __future__ import annotations

from pathlib import Path

import pytest

from octomem.engine import words
from octomem.engine.relevance import content_words

DOCS = Path(__file__).resolve().parents[1] / "docs"
TEXTS = [
    "Where did Caroline go camping last summer?",
    "The groups painted runs; RUNNING runners ran. Ever been to São Paulo's 2nd café?",
    "it is what it is",  # function words only
    "", "_under_score_ words_", "Ünïcode ÉCOLES écoles",
]


def plain(text: str) -> frozenset[str]:
    """The definition, folding every word again."""
    return frozenset(words.fold(w) for w in (x.casefold() for x in words.WORD.findall(text))
                     if w not in words.FUNCTION_WORDS)


def corpus() -> list[str]:
    """The paragraphs of the repository's docs (English prose, tables, code)."""
    return [p for page in sorted(DOCS.glob("*.md")) for p in page.read_text().split("\n\n")]


def test_folds_as_before() -> None:
    assert words.fold("groups") == "group" and words.fold("painted") == "paint"
    assert words.fold("runs") == "runs" and words.fold("running") == "runn"
    assert content_words(TEXTS[0]) == frozenset({"caroline", "go", "camp", "last", "summer"})
    assert content_words(TEXTS[2]) == frozenset()


def test_memo_gives_the_plain_sets() -> None:
    texts = TEXTS + corpus()
    assert len(texts) > 400
    content_words.cache_clear()
    words.FOLDED.clear()
    assert [content_words(t) for t in texts] == [plain(t) for t in texts]
    content_words.cache_clear()  # again, every word now memoised
    assert [content_words(t) for t in texts] == [plain(t) for t in texts]
    assert words.FOLDED["Groups"] == "group" and words.FOLDED["the"] == ""


def test_memo_starts_over_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(words, "FOLDED_MAX", 5)
    words.FOLDED.clear()
    content_words.cache_clear()
    got = content_words(TEXTS[1])
    assert got == plain(TEXTS[1]) and len(words.FOLDED) <= 5
