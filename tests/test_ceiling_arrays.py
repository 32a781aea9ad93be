"""Token ceilings of whole batches by array operations never fall below the bundled
tokenizer's counts, and take off what the module says they do (real tokenizer file)."""

from __future__ import annotations

import json
from itertools import islice
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from octomem.plugins.fastembed.ceiling_arrays import VocabularyKeys
from octomem.plugins.fastembed.embedder import FastembedEmbedder
from octomem.plugins.fastembed.minilm_tokenizer import tokenizer_dir
from octomem.plugins.fastembed.wordpiece_count import WordPieceCounter

TOKENIZER = tokenizer_dir() / "tokenizer.json"
SHARED = Path("/work/shared/data")
_TOK = Tokenizer.from_file(str(TOKENIZER))
_TOK.no_truncation()
_TOK.no_padding()
_COUNTER = WordPieceCounter(_TOK)


def exact(texts: list[str]) -> list[int]:
    return [len(e.ids) for e in _TOK.encode_batch(texts, add_special_tokens=False)]


def test_values_of_hand_picked_texts() -> None:
    vocab = _COUNTER._vocab
    assert "the" in vocab and "cat" in vocab and "xqzv" not in vocab
    texts = ["the cat", "The CAT!", "", "  \t\n\r ", "xqzv", "cat\x01the", "café",
             "the [SEP] cat", "[x] the", "中文 the", "the\u0301 cat", "a1 12"]
    got = _COUNTER.batch_ceilings(texts)
    assert got[:5] == [2, 3, 0, 0, 4]  # one a word in the vocabulary; one per punctuation
    assert got[5] == 7  # a control joins its neighbours: characters only (BERT: "catthe")
    assert got[6] == 3 + 3  # "caf" beside a letter beyond ASCII: characters, é three
    assert got[7] == len("the[SEP]cat")  # an added token: no refinement
    assert got[8] == 3 + 1  # a bracket that opens no added token: refined
    assert got[9] == 2 * 3 + 1  # CJK three each; "the" between ASCII separators: one
    assert got[10] == 3 + 3 + 1  # a combining mark after "the": characters only
    assert all(g >= n for g, n in zip(got, exact(texts), strict=True))
    above = "the [SEP] cat " * 30  # above a threshold and holding an added token: characters
    assert _COUNTER.batch_ceilings([above, "the cat " * 40], 10) == [30 * 11, 80]


def test_a_vocabulary_prefix_bounds_a_word_above_the_threshold() -> None:
    vocab = _COUNTER._vocab
    word = "protectionxq"  # not an entry; its longest entry prefix: "protection"
    assert word not in vocab and "protection" in vocab
    assert not any(word[:k] in vocab for k in range(11, len(word)))
    text = " ".join([word] * 30)
    plain_bound, refined = _COUNTER.batch_ceilings([text]), _COUNTER.batch_ceilings([text], 100)
    assert plain_bound == [12 * 30]  # below the threshold only whole words are looked up
    assert refined == [(1 + 12 - 10) * 30] >= exact([text])  # first piece >= 10 letters
    assert _COUNTER.batch_ceilings([text], 400) == plain_bound  # not above: not refined


def test_a_hash_table_finds_its_entries_and_nothing_else() -> None:
    entries = [b"ab", b"abc", b"abcdefgh", b"abcdefghi", b"abcdefghijklmnop", b"zz" * 8]
    keys = VocabularyKeys([*entries, b"toolongtobeakeyhere", b"a"])
    probes = [*entries, b"abcdefghij", b"abcdefg", b"b", b"abcdefghijklmnoq", b"zz"]
    words = np.array(probes, "S16").view(np.uint64).reshape(-1, 2)
    found = keys.contains(words[:, 0].copy(), words[:, 1].copy())
    assert found.tolist() == [True] * len(entries) + [False] * 5


#: Pieces of generated texts: ASCII of every class, controls BERT drops, added tokens'
#: texts, characters beyond ASCII that join, split or vanish, and words in the
#: vocabulary and not (their prefixes in it or not).
PIECES = [*"abcXYZ019 .,;:!?'\"-_()[]{}<>/\\@#$%^&*+=~`|\t\n\r", "[SEP]", "[MASK]", "[x]",
          "\xa0", "\u2009", "\u2014", "\u2026", "\u201c", "\u00e9", "\u00df", "\u0130", "\x01",
          "\x0b", "\x7f", "\x00", "\u4e2d", "\u2028", "\u0301", "\ufffd", "\u212a", "\ud55c",
          "the ", "Protein", "proteinxq", "unbelievablyqz", "cells", "xqzv", "a1", "12",
          "antidisestablishmentarianism", "x" * 40]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(PIECES), max_size=60).map("".join), max_size=8))
def test_ceilings_bound_the_tokenizer_on_generated_texts(texts: list[str]) -> None:
    counts = exact(texts)
    for threshold in (None, 0, 20):
        ceilings = _COUNTER.batch_ceilings(texts, threshold)
        assert all(c is not None and c >= n for c, n in zip(ceilings, counts, strict=True))


@pytest.mark.skipif(not SHARED.is_dir(), reason="needs the shared SciFact and LoCoMo copies")
def test_ceilings_bound_the_tokenizer_on_real_corpora() -> None:
    texts = []
    for dataset in ("scifact", "locomo"):
        with (SHARED / dataset / "corpus.jsonl").open() as rows:
            texts += [json.loads(line)["text"] for line in islice(rows, 1500)]
    counts = exact(texts)
    ceilings = _COUNTER.batch_ceilings(texts, 254)
    assert all(c is not None and c >= n for c, n in zip(ceilings, counts, strict=True))
    fits = sum(c <= 254 for c in ceilings)  # at least as many fit as text by text
    assert fits >= sum(c is not None and c <= 254 for c in _COUNTER.ceilings(texts, 254))


def test_the_embedder_gives_them_and_a_blank_added_token_gives_none() -> None:
    embedder = FastembedEmbedder()
    texts = ["the cat sat on the mat " * 20, "short"]
    # above the budget (254) word by word; within it by characters
    assert embedder.token_ceilings(texts) == [120, 5]
    blank = Tokenizer.from_str(_TOK.to_str())
    blank.add_special_tokens([" "])  # a token of whitespace only: no ceiling is sound
    assert WordPieceCounter(blank).batch_ceilings(["a b"]) == [None]

