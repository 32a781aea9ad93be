"""Count BERT WordPiece tokens exactly, each space-separated segment counted once and cached.

The ingest path counts every document's tokens to split it at the model's budget; the
``tokenizers`` library took ~2 ms per 300-character text on the shared 2-core machine
(``encode_batch``, load ~10; 5.6 s for the 10,000 texts of the ingest benchmark at load
~5), about 40 % of ingest excluding embedding. A BERT tokenizer (``BertNormalizer`` with
lowercasing, ``BertPreTokenizer``, ``WordPiece``; Devlin et al. 2019, the
``bert-base-uncased`` vocabulary all-MiniLM-L6-v2 uses) has three properties that make a
text's count the sum of the counts of its segments between ASCII spaces:

- the normalizer works character by character (``clean_text`` drops controls and turns
  whitespace into a space, CJK characters get spaces around them, accents are stripped
  after NFD, and each character is lowercased on its own), except that NFD reorders
  runs of combining marks, and a space (canonical combining class 0) ends such a run;
- the pre-tokenizer splits on whitespace, so a space always separates, and nothing joins
  across it;
- added tokens (``[SEP]``, ``[MASK]``, ...) are matched first, and one without whitespace
  in it lies inside a segment (a text holding an added token that has whitespace goes to
  the tokenizer whole).

So each distinct segment is counted once. A segment of plain characters (:func:`plain`)
is counted here: for printable ASCII, BERT's normalizer and pre-tokenizer reduce to
lowercase, split on whitespace, every punctuation character (ASCII 33-47, 58-64, 91-96,
123-126: BERT's ``_is_punctuation``) a pre-token of its own, runs of letters and digits
the others; its count is one per punctuation character plus each word's WordPiece count
(greedy longest-match-first over the tokenizer's own vocabulary, ``##`` continuations,
one ``[UNK]`` for a word that does not split or is longer than
``max_input_chars_per_word``: the algorithm of Wu et al. 2016 as BERT and the
``tokenizers`` library implement it), each word's computed once and cached. Beyond ASCII,
a space separator (Unicode ``Zs``, whitespace to BERT) and a punctuation character
(``P*``) that Unicode decomposition and lowercasing leave alone (curly quotes, dashes,
ellipses: one token each, ``[UNK]`` if not in the vocabulary) keep a segment plain. Any
other segment (accents, Greek letters, controls, CJK) is normalized and pre-tokenized by
the ``tokenizers`` library's own ``BertNormalizer`` and ``BertPreTokenizer`` (built from
``tokenizer.json``'s settings, no vocabulary: the same code and Unicode tables as the
tokenizer's) and its words counted by the WordPiece above; only a segment holding an added
token goes to the full tokenizer, which is loaded when first needed (building it from
``tokenizer.json`` was ~18 % of ingest excluding embedding, 10k documents, fresh process).
A text of plain ASCII holding no added token is split into BERT's pre-tokens whole, by one
regular expression, rather than segment by segment (the 10k texts of
``benchmarks/results/peers/ingest-10k.md`` in a fresh process: counting 0.88-1.04 ->
0.52-0.66 s CPU at load 8-9). Exact, not an estimate: tests compare every count with the
tokenizer's on SciFact, LoCoMo and generated strings.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from itertools import chain
from typing import Any

from .bert_text import ALNUM, ASCII, EXPANSION, LONG_WORD, PRE_TOKEN, plain
from .wordpiece_ceilings import ascii_word_ceiling, segment_ceiling, shorter_words

#: Distinct words (and, apart, distinct segments) a cache holds before it starts over
#: (~100 bytes each; it starts over at the next call, so it may pass this by one call's).
CACHE_WORDS = 500_000
#: Segments longer than this many characters are counted but not cached (a long run
#: without spaces, such as a URL or an encoded blob, seldom repeats).
SEGMENT_CHARS = 64


class WordPieceCounter:
    """Token counts of texts, summed from cached counts of their space-separated segments.

    :param tokenizer: a ``tokenizers.Tokenizer`` for which
        :func:`~.bert_text.is_bert_wordpiece` holds, with no truncation and no padding;
        ``None`` with ``load``.
    :param spec: its ``tokenizer.json`` content, parsed (default: read from ``tokenizer``).
    :param load: returns that tokenizer, called the first time a segment needs it (one
        holding an added token); ``spec`` is then required.
    :param shorter: :func:`.wordpiece_ceilings.shorter_words` of the vocabulary when already
        made (:mod:`.vocab_cache`), or a function that returns it, called when first needed;
        ``None``: made when first needed.
    :param longest: the vocabulary's longest entry's length, when already known.
    :param keys: :class:`.ceiling_arrays.VocabularyKeys` of ``shorter``, when already made
        (:mod:`.vocab_cache`); else made when :meth:`batch_ceilings` is first called.
    """

    def __init__(self, tokenizer: Any = None, spec: dict[str, Any] | None = None,
                 load: Callable[[], Any] | None = None,
                 shorter: dict[bytes, int] | Callable[[], dict[bytes, int]] | None = None,
                 longest: int | None = None, keys: Any = None) -> None:
        self._tokenizer = tokenizer
        self._load = load
        self._words: dict[str, int] = {}
        self._segments: dict[str, int] = {}
        spec = spec if spec is not None else json.loads(tokenizer.to_str())
        self._normalizer_spec: dict[str, Any] = dict(spec["normalizer"])
        self._split: tuple[Any, Any] | None = None  # (normalizer, pre-tokenizer), when needed
        model = spec["model"]
        #: Added tokens (``[SEP]``, ``[MASK]``, ...) match the raw text before anything
        #: else, as one token: a segment holding one goes to the tokenizer.
        self._added = [str(a["content"]).lower() if a.get("normalized") else str(a["content"])
                       for a in spec.get("added_tokens") or ()]
        self._added_lower = any(a.get("normalized") for a in spec.get("added_tokens") or ())
        #: Finds a character an added token starts with (a quick test before the full one).
        first = {c for a in self._added if a for c in (a[0], a[0].upper())}
        self._added_first = re.compile(f"[{re.escape(''.join(sorted(first)))}]" if first
                                       else r"(?!)")
        #: An added token with whitespace in it could span two segments: a text holding
        #: one is counted by the tokenizer whole.
        self._spaced_added = any(not a.split() or a.split()[0] != a for a in self._added)
        #: An added token that is whitespace only would be a token of no other character.
        self._blank_added = any(not a.strip() for a in self._added)
        #: An added token of letters and digits only could hide inside a word.
        self._alnum_added = any(a.isalnum() for a in self._added)
        self._vocab = frozenset(model["vocab"])
        self._prefix: str = model.get("continuing_subword_prefix") or "##"
        self._max_chars: int = int(model.get("max_input_chars_per_word") or 100)
        #: No vocabulary entry is longer: a longer match is never tried.
        self._longest = longest if longest is not None else max(map(len, self._vocab),
                                                                default=1)
        #: ASCII vocabulary entries as bytes, each to its length less one (what a word in
        #: the vocabulary takes off a text's character count); made when first needed.
        self._shorter = shorter
        self._keys = keys
        self._arrays: Any = None  # .ceiling_arrays.BatchCeilings, made when first needed

    def ceilings(self, texts: Sequence[str], refine_above: int | None = None
                 ) -> list[int | None]:
        """Return, per text, a number its :meth:`count` cannot exceed, without WordPiece:
        its ASCII characters other than spaces and newlines plus :data:`EXPANSION` per
        other character; above ``refine_above``, for a :func:`plain` text holding no added
        token, the sum over its pre-tokens of 1 for a word in the vocabulary, else the
        word's length (a punctuation character: 1).

        Why it holds: BERT's normalizer works character by character (NFD only reorders
        marks) and makes of an ASCII character at most one (controls dropped, whitespace
        a space, lowercased), of any other at most :data:`EXPANSION`; the pre-tokenizer cuts
        the result at whitespace into non-empty pre-tokens (on a plain text:
        :data:`PRE_TOKEN`'s); WordPiece makes of a pre-token of n characters at most n
        pieces (each covers at least one) or one ``[UNK]``; an added token matched first
        is one token for its characters, not all whitespace (else no ceiling is given).
        Tests compare it with the tokenizer on SciFact, LoCoMo and generated strings
        (punctuation-only text meets it exactly).

        A text that is not plain (beyond ASCII: accents, Greek, CJK) is refined segment by
        segment (:meth:`_segment_ceiling`): its ASCII segments word by word, the others
        by characters.

        :param refine_above: ceilings above this are refined word by word (a regular
            expression pass, no WordPiece); ``None``: never.
        """
        if self._blank_added:
            return [None] * len(texts)
        out: list[int | None] = []
        for text in texts:
            ceiling = len(text) - text.count(" ") - text.count("\n")
            if not text.isascii():
                ceiling += (EXPANSION - 1) * (len(text) - len(text.encode("ascii", "ignore")))
            if refine_above is not None and ceiling > refine_above \
                    and not self._holds_added(text):
                if text.isascii():
                    refined = self._ascii_word_ceiling(text)
                    if refined is not None:
                        ceiling = min(ceiling, refined)
                elif plain(text):
                    ceiling = min(ceiling, self._word_ceiling(text))
                else:
                    ceiling = min(ceiling, self._segment_ceiling(text))
            out.append(ceiling)
        return out

    def batch_ceilings(self, texts: Sequence[str], refine_above: int | None = None
                       ) -> list[int | None]:
        """Return :func:`.ceiling_arrays.batch_ceilings` of ``texts``: ceilings of a batch
        by array operations that run without the GIL (``None`` each beside a blank added
        token)."""
        if self._blank_added:
            return [None] * len(texts)
        if self._arrays is None:
            from .ceiling_arrays import BatchCeilings

            self._arrays = BatchCeilings.of(self)
        return list(self._arrays(texts, refine_above))

    def _segment_ceiling(self, text: str) -> int:
        """Return :func:`.wordpiece_ceilings.segment_ceiling` of a text beyond ASCII that
        is not :func:`plain`."""
        return segment_ceiling(text, self._shorter_words(), EXPANSION)

    def _ascii_word_ceiling(self, text: str) -> int | None:
        """Return :meth:`_word_ceiling` of an ASCII ``text`` by byte operations
        (:func:`.wordpiece_ceilings.ascii_word_ceiling`), or ``None`` when it is not
        :func:`plain`."""
        return ascii_word_ceiling(text, self._shorter_words())

    def _shorter_words(self) -> dict[bytes, int]:
        """Return the vocabulary's entries an ASCII run can equal, as bytes, each to its
        length less one (:func:`.wordpiece_ceilings.shorter_words`; made when first
        needed)."""
        shorter = self._shorter
        if shorter is None or callable(shorter):
            shorter = self._shorter = shorter_words(self._vocab) if shorter is None \
                else shorter()
        return shorter

    def _word_ceiling(self, text: str) -> int:
        """Return :meth:`ceilings`' word-by-word bound of a :func:`plain` text (loops in C:
        a Python loop over the words cost as much as the WordPiece it saves).

        A pre-token of one character counts 1 whether in the vocabulary or not, so only
        words of two or more letters and digits are looked up (:data:`LONG_WORD`: a
        fifth fewer strings made than with :data:`PRE_TOKEN`); the rest of the sum is
        the text's characters other than whitespace (its pre-tokens' lengths).
        """
        low = text.lower()  # as long as the text: plain characters lowercase to one
        known = list(filter(self._vocab.__contains__, LONG_WORD.findall(low)))  # 1 each
        if low.isascii():  # BERT's whitespace in plain ASCII: space, \t, \n, \r
            chars = len(low) - low.count(" ") - low.count("\n") - low.count("\t") \
                - low.count("\r")
        else:  # Zs spaces too (str.split's whitespace, on plain characters)
            chars = sum(map(len, low.split()))
        return chars - sum(map(len, known)) + len(known)

    def _holds_added(self, text: str) -> bool:
        """True when an added token's text occurs in ``text`` (e.g. a literal ``[SEP]``)."""
        if not self._added_first.search(text):
            return False
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
            end = min(len(word), start + self._longest)
            while end > start and (word[start:end] if start == 0
                                   else prefix + word[start:end]) not in vocab:
                end -= 1
            if end == start:
                return 1
            count, start = count + 1, end
        return count

    def count(self, texts: Sequence[str]) -> list[int]:
        """Return each text's length in WordPiece tokens, special tokens excluded.

        A text's count is the sum of its space-separated segments' counts (the module
        docstring says why that is exact), each distinct segment counted once and cached; a
        plain ASCII text's, the sum of its pre-tokens' counts, each distinct word cached.

        :returns: one count per text, in order; equal to ``len(tokenizer.encode(text,
            add_special_tokens=False).ids)``.
        """
        known = self._segments
        if len(known) >= CACHE_WORDS:  # start over (a new object: other threads keep theirs)
            known = self._segments = {}
        words = self._words
        if len(words) >= CACHE_WORDS:
            words = self._words = {}
        get, spaced, word_get = known.__getitem__, self._spaced_added, words.__getitem__
        ascii_text, pre_tokens, holds_added = ASCII.match, PRE_TOKEN.findall, self._holds_added
        out: list[int] = []
        pending: list[tuple[int, list[str]]] = []
        whole: list[int] = []
        unseen: list[tuple[int, list[str]]] = []
        for i, text in enumerate(texts):
            if ascii_text(text) and not holds_added(text):  # BERT's pre-tokens, whole text
                tokens = pre_tokens(text.lower())
                try:
                    out.append(sum(map(word_get, tokens)))
                except KeyError:  # a word not seen yet: counted below
                    unseen.append((i, tokens))
                    out.append(0)
                continue
            if spaced and holds_added(text):
                whole.append(i)
                out.append(0)
                continue
            segments = text.split(" ")
            try:
                out.append(sum(map(get, segments)))
            except KeyError:  # a segment not seen yet: counted below
                pending.append((i, segments))
                out.append(0)
        if unseen:
            self._count_words(unseen, words, out)
        if pending:
            self._count_pending(pending, known, out)
        if whole:
            encoded = self._full().encode_batch([texts[i] for i in whole],
                                                add_special_tokens=False)
            for i, encoding in zip(whole, encoded, strict=True):
                out[i] = len(encoding.ids)
        return out

    def _word(self, word: str) -> int:
        """Return the count of one pre-token of a plain text (a punctuation character: 1)."""
        if word[0] not in ALNUM:
            return 1
        return 1 if word in self._vocab else self.pieces(word)

    def _count_words(
        self, unseen: list[tuple[int, list[str]]], words: dict[str, int], out: list[int]
    ) -> None:
        """Count the new words of the ``(index, pre-tokens)`` texts in ``unseen`` into
        ``words``, then set ``out[index]``."""
        word, get = self._word, words.__getitem__
        for i, tokens in unseen:
            long: dict[str, int] = {}
            for w in set(tokens).difference(words):
                if len(w) <= SEGMENT_CHARS:
                    words[w] = word(w)
                else:  # a long run seldom repeats: counted, not cached
                    long[w] = word(w)
            out[i] = sum(map(get, tokens)) if not long else sum(
                long[w] if w in long else words[w] for w in tokens)

    def _full(self) -> Any:
        """Return the full tokenizer, loading it the first time."""
        if self._tokenizer is None:
            if self._load is None:
                raise ValueError("WordPieceCounter needs a tokenizer or a load function")
            self._tokenizer = self._load()
        return self._tokenizer

    def _count_unusual(self, segments: list[str]) -> dict[str, int]:
        """Count segments that are not plain: one holding an added token by the full
        tokenizer; the others normalized and pre-tokenized by the library's BERT normalizer
        and pre-tokenizer, their words by :meth:`pieces`."""
        counts: dict[str, int] = {}
        added = [s for s in segments if self._holds_added(s)]
        if added:
            encoded = self._full().encode_batch(added, add_special_tokens=False)
            counts.update((s, len(e.ids)) for s, e in zip(added, encoded, strict=True))
        if self._split is None:
            from tokenizers.normalizers import BertNormalizer
            from tokenizers.pre_tokenizers import BertPreTokenizer

            spec = self._normalizer_spec
            self._split = (BertNormalizer(
                clean_text=spec.get("clean_text", True),
                handle_chinese_chars=spec.get("handle_chinese_chars", True),
                strip_accents=spec.get("strip_accents"), lowercase=spec.get("lowercase", True),
            ), BertPreTokenizer())
        normalizer, pre_tokenizer = self._split
        vocab, pieces = self._vocab, self.pieces
        for segment in segments:
            if segment not in counts:
                found = pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(segment))
                counts[segment] = sum(1 if w in vocab else pieces(w) for w, _ in found)
        return counts

    def _count_pending(
        self, pending: list[tuple[int, list[str]]], known: dict[str, int], out: list[int]
    ) -> None:
        """Count the new segments of the ``(index, segments)`` texts in ``pending`` into
        ``known`` (those of at most :data:`SEGMENT_CHARS` characters; longer ones apart),
        then set ``out[index]``."""
        new = {s for s in set(chain.from_iterable(p[1] for p in pending)) if s not in known}
        counts = self._count_segments(new)
        long = {s: n for s, n in counts.items() if len(s) > SEGMENT_CHARS}
        known.update(counts if not long else
                     {s: n for s, n in counts.items() if len(s) <= SEGMENT_CHARS})
        get = known.__getitem__
        for i, segments in pending:
            out[i] = sum(map(get, segments)) if not long else sum(
                long[s] if s in long else known[s] for s in segments)

    def _count_segments(self, segments: set[str]) -> dict[str, int]:
        """Return each segment's count: a plain one from its words' WordPiece counts (a word
        in the vocabulary is one token), the rest by :meth:`_count_unusual`."""
        counts: dict[str, int] = {}
        other: list[str] = []
        words = self._words
        if len(words) >= CACHE_WORDS:  # start over (a new object: other threads keep theirs)
            words = self._words = {}
        vocab, pieces, one_word = self._vocab, self.pieces, not self._alnum_added
        for segment in segments:
            if one_word and segment.isalnum() and segment.isascii():  # the common case
                word = segment.lower()
                n = words.get(word)
                if n is None:
                    n = words[word] = 1 if word in vocab else pieces(word)
                counts[segment] = n
            elif plain(segment) and not self._holds_added(segment):
                total = 0
                for word in PRE_TOKEN.findall(segment.lower()):
                    n = words.get(word)
                    if n is None:  # a punctuation character: one token
                        n = words[word] = (1 if word in vocab else pieces(word)) \
                            if word[0] in ALNUM else 1
                    total += n
                counts[segment] = total
            else:
                other.append(segment)
        if other:
            counts.update(self._count_unusual(other))
        return counts
