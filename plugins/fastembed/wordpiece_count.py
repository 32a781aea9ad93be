"""Count BERT WordPiece tokens of plain-ASCII texts word by word, each word's count cached.

The ingest path counts every document's tokens to split it at the model's budget; the
``tokenizers`` library took ~2 ms per 300-character text on the shared 2-core machine
(``encode_batch``, load ~10), about 40 % of ingest excluding embedding. A BERT tokenizer
(``BertNormalizer`` with lowercasing, ``BertPreTokenizer``, ``WordPiece``; Devlin et al.
2019, the ``bert-base-uncased`` vocabulary all-MiniLM-L6-v2 uses) tokenizes each pre-token
independently, and for printable ASCII its normalizer and pre-tokenizer reduce to:
lowercase, split on whitespace, every punctuation character (ASCII 33-47, 58-64, 91-96,
123-126: BERT's ``_is_punctuation``) a pre-token of its own, runs of letters and digits the
others. A text's count is then the sum of its pre-tokens' counts: one per punctuation
character, and each word's WordPiece count (greedy longest-match-first over the tokenizer's
own vocabulary, ``##`` continuations, one ``[UNK]`` for a word that does not split or is
longer than ``max_input_chars_per_word``: the algorithm of Wu et al. 2016 as BERT and the
``tokenizers`` library implement it), computed once per distinct word and cached (the
library's per-call overhead alone was ~65 µs a word). Beyond ASCII, a space separator
(Unicode ``Zs``, whitespace to BERT) and a punctuation character (``P*``) that Unicode
decomposition and lowercasing leave alone (curly quotes, dashes, ellipses: one token each,
``[UNK]`` if not in the vocabulary) keep the text on this path. Exact, not an estimate
(tests compare it with the tokenizer on SciFact, LoCoMo and generated strings); any other
character (controls are dropped by BERT's ``clean_text``, accents stripped, CJK split) sends
the text to the tokenizer whole.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: Plain ASCII: BERT's normalizer only lowercases it.
_ASCII = re.compile(r"[\x20-\x7e\t\n\r]*\Z")
#: BERT's pre-tokens of a lowercased text of :func:`plain` characters: letter-digit runs,
#: or one punctuation character (whitespace separates and is dropped).
_PRE_TOKEN = re.compile(r"[a-z0-9]+|[^\sa-z0-9]")
_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
#: Distinct words kept before the cache starts over (~100 bytes each).
CACHE_WORDS = 500_000


def is_bert_wordpiece(tokenizer_json: Path) -> bool:
    """Return True when ``tokenizer.json`` describes an uncased BERT WordPiece tokenizer
    (the only kind :class:`WordPieceCounter` reproduces).

    :raises OSError: the file cannot be read.
    """
    spec = json.loads(tokenizer_json.read_text(encoding="utf-8"))
    normalizer = spec.get("normalizer") or {}
    return (normalizer.get("type") == "BertNormalizer" and normalizer.get("lowercase") is True
            and normalizer.get("clean_text") is True
            and (spec.get("pre_tokenizer") or {}).get("type") == "BertPreTokenizer"
            and (spec.get("model") or {}).get("type") == "WordPiece")


_SAFE: dict[str, bool] = {}


def plain(text: str) -> bool:
    """Return True when BERT's normalizer and pre-tokenizer treat ``text`` as
    :data:`_PRE_TOKEN` splits it (printable ASCII, tab, newline, carriage return, ``Zs``
    spaces, and punctuation that decomposition and lowercasing leave unchanged)."""
    if _ASCII.match(text):
        return True
    for char in set(text):
        safe = _SAFE.get(char)
        if safe is None:
            category = unicodedata.category(char)
            safe = _SAFE[char] = bool(
                _ASCII.match(char) or category == "Zs" or (
                    category.startswith("P") and unicodedata.normalize("NFD", char) == char
                    and char.lower() == char))
        if not safe:
            return False
    return True


class WordPieceCounter:
    """Token counts of texts, plain-ASCII ones assembled from cached per-word counts.

    :param tokenizer: a ``tokenizers.Tokenizer`` for which :func:`is_bert_wordpiece`
        holds, with no truncation and no padding.
    """

    def __init__(self, tokenizer: Any) -> None:
        self._tokenizer = tokenizer
        self._words: dict[str, int] = {}
        spec = json.loads(tokenizer.to_str())
        model = spec["model"]
        #: Added tokens (``[SEP]``, ``[MASK]``, ...) match the raw text before anything
        #: else, as one token: a text holding one goes to the tokenizer.
        self._added = [str(a["content"]).lower() if a.get("normalized") else str(a["content"])
                       for a in spec.get("added_tokens") or ()]
        self._added_lower = any(a.get("normalized") for a in spec.get("added_tokens") or ())
        self._vocab = frozenset(model["vocab"])
        self._prefix: str = model.get("continuing_subword_prefix") or "##"
        self._max_chars: int = int(model.get("max_input_chars_per_word") or 100)

    def _holds_added(self, text: str) -> bool:
        """True when an added token's text occurs in ``text`` (e.g. a literal ``[SEP]``)."""
        lower = text.lower() if self._added_lower else text
        return any(a in text or a in lower for a in self._added)

    def pieces(self, word: str) -> int:
        """Return how many WordPiece tokens ``word`` (one pre-token) becomes.

        :returns: the number of greedy longest-match pieces; 1 (``[UNK]``) when some rest
            of the word matches no vocabulary entry or the word is too long.
        """
        if len(word) > self._max_chars:
            return 1
        vocab, prefix, start, count = self._vocab, self._prefix, 0, 0
        while start < len(word):
            end = len(word)
            while end > start and (word[start:end] if start == 0
                                   else prefix + word[start:end]) not in vocab:
                end -= 1
            if end == start:
                return 1
            count, start = count + 1, end
        return count

    def count(self, texts: Sequence[str]) -> list[int]:
        """Return each text's length in WordPiece tokens, special tokens excluded.

        :returns: one count per text, in order; equal to ``len(tokenizer.encode(text,
            add_special_tokens=False).ids)``.
        """
        out: list[int | None] = [None] * len(texts)
        split: list[tuple[int, list[str]]] = []
        other: list[int] = []
        for i, text in enumerate(texts):
            if plain(text) and not self._holds_added(text):
                split.append((i, _PRE_TOKEN.findall(text.lower())))
            else:
                other.append(i)
        known = self._words
        words = self._learn(known, {w for _, pieces in split for w in pieces if w not in known})
        for i, pieces in split:
            out[i] = sum(map(words.__getitem__, pieces))
        if other:
            encoded = self._tokenizer.encode_batch([texts[i] for i in other],
                                                   add_special_tokens=False)
            for i, encoding in zip(other, encoded, strict=True):
                out[i] = len(encoding.ids)
        return [n for n in out if n is not None]

    def _learn(self, known: dict[str, int], new: set[str]) -> dict[str, int]:
        """Add the WordPiece count of each word in ``new`` to ``known`` (a punctuation
        character counts one).

        :returns: the cache holding them: ``known``, or a fresh one when ``known`` is full
            (a new object, so a thread still reading the old one is not disturbed).
        """
        if not new:
            return known
        if len(known) + len(new) > CACHE_WORDS:
            known = self._words = {}
        for w in new:  # a punctuation character: one token
            known[w] = self.pieces(w) if w[0] in _ALNUM else 1
        return known
