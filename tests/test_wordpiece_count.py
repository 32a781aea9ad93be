"""The word-by-word WordPiece counter gives the bundled tokenizer's exact counts."""

from __future__ import annotations

import json
from itertools import islice
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer
from tokenizers.normalizers import BertNormalizer

from octomem.plugins.fastembed import wordpiece_count
from octomem.plugins.fastembed.bert_text import EXPANSION, PRE_TOKEN, is_bert_wordpiece, plain
from octomem.plugins.fastembed.embedder import FastembedEmbedder
from octomem.plugins.fastembed.minilm_tokenizer import tokenizer_dir
from octomem.plugins.fastembed.wordpiece_count import WordPieceCounter

TOKENIZER = tokenizer_dir() / "tokenizer.json"
SHARED = Path("/work/shared/data")


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    tok = Tokenizer.from_file(str(TOKENIZER))
    tok.no_truncation()
    tok.no_padding()
    return tok


def exact(tokenizer: Tokenizer, texts: list[str]) -> list[int]:
    return [len(e.ids) for e in tokenizer.encode_batch(texts, add_special_tokens=False)]


def test_the_bundled_tokenizer_is_bert_wordpiece(tmp_path: Path) -> None:
    assert is_bert_wordpiece(TOKENIZER)
    spec = json.loads(TOKENIZER.read_text())
    spec["normalizer"]["lowercase"] = False  # a cased vocabulary is not reproduced
    (tmp_path / "t.json").write_text(json.dumps(spec))
    assert not is_bert_wordpiece(tmp_path / "t.json")


def test_counts_equal_the_tokenizer_on_hand_picked_texts(tokenizer: Tokenizer) -> None:
    texts = ["Hello, World!", "  spaces\tand\nnewlines\r ", "", "x" * 150 + " short",
             "antidisestablishmentarianism's (co-)factors: 12.5% vs. 3e-9",
             "“Curly” quotes — dashes… and ‘more’", "café naïve", "β-cells and α/γ",
             "non\xa0breaking\u2009spaces", "ctrl\x01char", "中文字符 mixed", "a\x0cb",
             "emoji 😀 here", "İstanbul", "ﬁne ligature", "한국어",
             "a [SEP] b", "x[MASK]y", "[cls] lower case", "[UNK]"]
    counter = WordPieceCounter(tokenizer)
    assert counter.count(texts) == exact(tokenizer, texts)
    assert counter.count(texts) == exact(tokenizer, texts)  # again, from the cache
    assert plain(texts[5]) and plain(texts[8])  # these stay on the word path
    assert not plain(texts[6]) and not plain(texts[9]) and not plain(texts[10])


_TOK = Tokenizer.from_file(str(TOKENIZER))
_TOK.no_truncation()
_TOK.no_padding()


#: Pieces the generated texts are made of: ASCII, the special tokens' texts, and characters
#: at each edge of the word path (spaces, punctuation, accents, controls, CJK).
PIECES = [*"abcXYZ019 .,;:!?'\"-_()[]{}<>/\\@#$%^&*+=~`|\t\n\r", "[SEP]", "[MASK]",
          "\xa0", "\u2009", "\u2014", "\u2026", "\u201c", "\u2019", "\u00e9", "\u00df", "\u0130",
          "\x01", "\x0b", "\u4e2d", "\u2028", "\u00bf", "\u00b7", "\u00a7", "\u0301", "\ufffd"]


_SHARED = WordPieceCounter(_TOK)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from(PIECES), max_size=60).map("".join), max_size=8))
def test_counts_equal_the_tokenizer_on_generated_texts(texts: list[str]) -> None:
    assert WordPieceCounter(_TOK).count(texts) == exact(_TOK, texts)
    # one counter across examples: segments cached by earlier texts are summed again
    assert _SHARED.count(texts) == exact(_TOK, texts)


@pytest.mark.skipif(not SHARED.is_dir(), reason="needs the shared SciFact and LoCoMo copies")
@pytest.mark.parametrize("dataset", ["scifact", "locomo"])
def test_counts_equal_the_tokenizer_on_real_corpora(tokenizer: Tokenizer, dataset: str) -> None:
    with (SHARED / dataset / "corpus.jsonl").open() as rows:
        texts = [json.loads(line)["text"] for line in islice(rows, 800)]
    counter = WordPieceCounter(tokenizer)
    got = [n for i in range(0, len(texts), 64) for n in counter.count(texts[i:i + 64])]
    assert got == exact(tokenizer, texts)
    assert sum(map(plain, texts)) > 0.8 * len(texts)  # most take the word path


def test_a_full_cache_starts_over_and_stays_exact(tokenizer: Tokenizer,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wordpiece_count, "CACHE_WORDS", 5)
    counter = WordPieceCounter(tokenizer)
    texts = ["one two three four", "five six seven eight nine", "one ten eleven",
             "five, ten; twelve", "one five thirteen fourteen fifteen sixteen"]
    for text in texts:  # words and segments cached before a start-over are mixed with new ones
        assert counter.count([text]) == exact(tokenizer, [text])
    assert len(counter._words) <= 5 + 6 and len(counter._segments) <= 5 + 6
    assert counter.count(texts) == exact(tokenizer, texts)


def test_long_segments_are_counted_not_cached(tokenizer: Tokenizer) -> None:
    counter = WordPieceCounter(tokenizer)
    url = "https://example.org/" + "path-segment/" * 10 + "?q=tokens&x=1"
    run = "a1" * 50  # one long word of a plain text
    texts = [f"see {url} now", f"{url}", "café " + "é" * 80, "short words only",
             f"see {run} now", f"café {url}"]
    assert len(url) > wordpiece_count.SEGMENT_CHARS < len(run)
    assert counter.count(texts) == exact(tokenizer, texts)
    assert counter.count(texts) == exact(tokenizer, texts)
    assert url not in counter._segments and "café" in counter._segments
    assert "é" * 80 not in counter._segments
    assert run not in counter._words and "see" in counter._words  # plain texts: by word


def test_the_full_tokenizer_is_built_only_for_added_tokens() -> None:
    spec = json.loads(TOKENIZER.read_text())
    loads: list[int] = []

    def load() -> Tokenizer:
        loads.append(1)
        return _TOK

    counter = WordPieceCounter(spec=spec, load=load)
    texts = ["Plain words, and (punctuation).", "café naïve β-cells ≥ 5 µm", "中文字符 mixed",
             "ctrl\x01char a\x0cb", "İstanbul ﬁne 한국어 😀"]
    assert counter.count(texts) == exact(_TOK, texts)
    assert loads == []  # normalizer and pre-tokenizer only, no vocabulary built
    for text in ("a [SEP] b", "café [MASK]"):
        assert counter.count([text]) == exact(_TOK, [text])
    assert loads == [1]


def test_added_tokens_with_spaces_or_letters_only_stay_exact(tokenizer: Tokenizer) -> None:
    custom = Tokenizer.from_str(tokenizer.to_str())
    custom.add_special_tokens(["foo bar", "zq"])  # one spans a space, one hides in words
    counter = WordPieceCounter(custom)
    assert counter._spaced_added and counter._alnum_added
    texts = ["a foo bar b", "foo  bar", "xzqy and zq", "plain words", "foo barn"]
    assert counter.count(texts) == exact(custom, texts)
    assert counter.count(texts) == exact(custom, texts)


def test_the_embedder_counts_with_it(tokenizer: Tokenizer) -> None:
    embedder = FastembedEmbedder()
    texts = ["Purring lowers stress.", "“Quoted” — yes", "中文"]
    assert embedder.count_tokens(texts) == exact(tokenizer, texts) == [5, 5, 2]
    assert isinstance(embedder._counter, WordPieceCounter)
    assert embedder._tokenizer is None  # not built for these texts


def test_ceilings_bound_the_tokenizer_and_are_met_by_punctuation(tokenizer: Tokenizer) -> None:
    counter = WordPieceCounter(tokenizer)
    texts = ["Hello, World!", "  spaces\tand\nnewlines\r ", "", "!!!! ???", "a b c",
             "x" * 150, "ctrl\x01char a\x0cb\x7f", "a [SEP] b", "[UNK][MASK]", "café", "中文",
             "한국어", "İstanbul ﬁne", "\u09cb\u09cb"]
    ceilings = counter.ceilings(texts)
    for text, ceiling, n in zip(texts, ceilings, exact(tokenizer, texts), strict=True):
        assert ceiling is not None and ceiling >= n, text
    assert ceilings[3] == exact(tokenizer, ["!!!! ???"])[0] == 7  # one per character
    assert ceilings[4] == 3 and ceilings[9:11] == [4 + 2, 2 + 2 * 2]
    words = "the cat sat on the mat " * 20  # in the vocabulary: refined, one token a word
    assert counter.ceilings([words], 50) == [120] < counter.ceilings([words])
    curly = "“the” — cat\xa0sat " * 20  # plain beyond ASCII: refined too
    assert exact(tokenizer, [curly]) <= counter.ceilings([curly], 50) == [120] \
        < counter.ceilings([curly])
    blank = Tokenizer.from_str(tokenizer.to_str())
    blank.add_special_tokens([" "])  # a token of whitespace only: no ceiling is sound
    assert WordPieceCounter(blank).ceilings(["a b"]) == [None]


def test_no_character_normalizes_to_more_than_the_expansion() -> None:
    spec = json.loads(TOKENIZER.read_text())["normalizer"]
    normalizer = BertNormalizer(clean_text=spec["clean_text"],
                                handle_chinese_chars=spec["handle_chinese_chars"],
                                strip_accents=spec["strip_accents"], lowercase=spec["lowercase"])
    chars = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    # spaces apart: NFD reorders marks only up to a space; a CJK character gets spaces
    longest = max(map(len, normalizer.normalize_str(" ".join(chars)).split(" ")))
    assert longest == EXPANSION  # a Hangul syllable: three jamo


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from(PIECES), max_size=60).map("".join), max_size=8))
def test_ceilings_bound_the_tokenizer_on_generated_texts(texts: list[str]) -> None:
    counts = exact(_TOK, texts)
    for ceilings in (_SHARED.ceilings(texts), _SHARED.ceilings(texts, 0)):
        assert all(c is not None and c >= n for c, n in zip(ceilings, counts, strict=True))


#: Plain pieces (ASCII, tab, CR, no-break and thin spaces, curly quote, dash, ellipsis) and
#: words in the vocabulary and not, to test the refined ceiling's value.
PLAIN_PIECES = [p for p in PIECES if plain(p) and not p.startswith("[")] + [
    "the ", "Protein", "cells", "xqzv", "a1", "12"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(PLAIN_PIECES), max_size=120).map("".join))
def test_refined_ceilings_sum_the_pre_tokens(text: str) -> None:
    """Refined, a plain text's ceiling is the sum over its pre-tokens (BERT's, lowercased)
    of 1 for one in the vocabulary, else its length (the longer words alone are looked up)."""
    vocab = _SHARED._vocab
    words = PRE_TOKEN.findall(text.lower())
    assert _SHARED.ceilings([text], 0) == [sum(1 if w in vocab else len(w) for w in words)]


@pytest.mark.skipif(not SHARED.is_dir(), reason="needs the shared SciFact and LoCoMo copies")
def test_ceilings_bound_the_tokenizer_on_real_corpora(tokenizer: Tokenizer) -> None:
    texts = []
    for dataset in ("scifact", "locomo"):
        with (SHARED / dataset / "corpus.jsonl").open() as rows:
            texts += [json.loads(line)["text"] for line in islice(rows, 800)]
    counts = exact(tokenizer, texts)
    counter = WordPieceCounter(tokenizer)
    for ceilings in (counter.ceilings(texts), counter.ceilings(texts, 0)):
        assert all(c is not None and c >= n for c, n in zip(ceilings, counts, strict=True))
    refined = counter.ceilings(texts, 0)
    assert sum(c <= 254 for c in refined) > 1.1 * sum(c <= 254 for c in counter.ceilings(texts))


#: ASCII pieces, plain and not: controls BERT drops (NUL, vertical tab, form feed, unit
#: separator, DEL), every punctuation class, mixed case, vocabulary words and others.
ASCII_PIECES = ["the ", "Protein", "CELLS", "xqzv", "a1", "12", " ", "\t", "\n", "\r", "\r\n",
                ".", ",", "(", ")", "-", "'", "#", "##", "[", "]", "~", "`", "_", "\\", "/",
                "\x00", "\x0b", "\x0c", "\x1f", "\x7f", "e.g.", "TNF-alpha", "IL-6", "x" * 120]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(ASCII_PIECES), max_size=150).map("".join))
def test_the_ascii_word_ceiling_is_the_word_ceiling(text: str) -> None:
    """The byte path gives :meth:`_word_ceiling`'s value on every plain ASCII text, and
    None (no refinement) on every other ASCII text, as ``plain`` decides."""
    got = _SHARED._ascii_word_ceiling(text)
    assert got == (_SHARED._word_ceiling(text) if plain(text) else None)


@pytest.mark.skipif(not SHARED.is_dir(), reason="needs the shared SciFact and LoCoMo copies")
def test_the_ascii_word_ceiling_is_the_word_ceiling_on_real_corpora(tokenizer: Tokenizer) -> None:
    texts = []
    for dataset in ("scifact", "locomo"):
        with (SHARED / dataset / "corpus.jsonl").open() as rows:
            texts += [json.loads(line)["text"] for line in islice(rows, 3000)]
    counter = WordPieceCounter(tokenizer)
    ascii_texts = [t for t in texts if t.isascii() and plain(t)]
    assert len(ascii_texts) > 4000
    assert [counter._ascii_word_ceiling(t) for t in ascii_texts] \
        == [counter._word_ceiling(t) for t in ascii_texts]


#: Pieces beyond ASCII that are not plain (accents, a combining mark, Greek, CJK, Hangul,
#: a Zs space, a line separator) between ASCII words in and out of the vocabulary.
MIXED_PIECES = [*ASCII_PIECES, "\u00e9", "caf\u00e9", "\u03b1", "\u03b2-cell", "\u0301",
                "\u4e2d\u6587", "\ud55c", "\xa0", "\u2028", "\u00df", "\u0130", "\u00bf", "[SEP]"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(MIXED_PIECES), max_size=80).map("".join), max_size=6))
def test_segment_ceilings_bound_the_tokenizer(texts: list[str]) -> None:
    """Texts that are not plain are refined segment by segment, and still bound the count."""
    counts = exact(_TOK, texts)
    for text, ceiling, n in zip(texts, _SHARED.ceilings(texts, 0), counts, strict=True):
        assert ceiling is not None and ceiling >= n, text
        if not plain(text) and not _SHARED._holds_added(text):
            assert ceiling <= _SHARED.ceilings([text])[0]
