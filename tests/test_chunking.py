from __future__ import annotations

from collections.abc import Sequence

from hypothesis import example, given, settings
from hypothesis import strategies as st

from octomem.engine.chunking import MAX_CHARS_PER_TOKEN, split_text, word_count


def words(texts):  # one token per whitespace word: easy to check by hand
    return [len(t.split()) for t in texts]


def test_short_text_stays_one_chunk() -> None:
    assert split_text("  Prefers tabs over spaces.  ", 10, words) == ["Prefers tabs over spaces."]


def test_blank_text_has_no_chunk() -> None:
    assert split_text(" \n\t ", 10, words) == []


def test_paragraphs_then_sentences_are_packed_within_budget() -> None:
    text = "one two three. four five six.\n\nseven eight nine ten. eleven twelve."
    chunks = split_text(text, 6, words)
    assert chunks == ["one two three. four five six.", "seven eight nine ten. eleven twelve."]


def test_a_sentence_over_budget_is_cut_on_words() -> None:
    chunks = split_text(" ".join(f"w{i}" for i in range(25)), 10, words)
    assert [len(c.split()) for c in chunks] == [10, 10, 5]


@settings(max_examples=60)
@given(st.lists(st.text(alphabet="abc .\n", min_size=0, max_size=40), max_size=30),
       st.integers(1, 30))
@example(["", "", "a" * 15], 1)  # one word, more than MAX_CHARS_PER_TOKEN a token: cut
@example(["", "", "a" * 8], 1)  # one word within the characters' bound: kept whole
@example(["a aaaaaaaaa"], 1)  # a word over budget among others: cut on characters too
def test_no_chunk_exceeds_budget_and_no_word_is_lost(parts: list[str], budget: int) -> None:
    text = " ".join(parts)
    chunks = split_text(text, budget, words)
    assert all(words([c])[0] <= budget for c in chunks)
    assert all(len(c) <= budget * MAX_CHARS_PER_TOKEN for c in chunks)
    if all(len(w) <= budget * MAX_CHARS_PER_TOKEN for w in text.split()):
        assert " ".join(chunks).split() == text.split()
    else:  # a word too long for a chunk is cut in characters: no character is lost
        assert "".join("".join(chunks).split()) == "".join(text.split())


def test_word_count_estimate() -> None:
    assert word_count(["a b c d e f g h i j"]) == [14]


def test_chunking_reads_each_character_a_bounded_number_of_times() -> None:
    """One paragraph of ~200,000 characters and no sentence end: the tokenizer sees each
    character a few times (it saw each window once per word before: ~100 times, and a
    1.1 MB statement took 420 s)."""
    text = " ".join(f"w{i % 997}" for i in range(40_000))
    seen = 0

    def counting(texts: Sequence[str]) -> list[int]:
        nonlocal seen
        seen += sum(len(t) for t in texts)
        return word_count(texts)

    chunks = split_text(text, 254, counting)
    assert " ".join(chunks).split() == text.split()
    assert all(word_count([c])[0] <= 254 for c in chunks)
    assert seen <= 5 * len(text), seen / len(text)
