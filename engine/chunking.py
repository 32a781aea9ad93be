"""Splitting document text into chunks no longer than the embedder's trained length."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .types import Chunk

#: Paragraph breaks, then sentence ends, then whitespace: the boundaries tried in order.
_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"\s+")

CountTokens = Callable[[Sequence[str]], list[int]]

#: Characters per token of budget beyond which a text is not counted whole before it is
#: split: English averages ~4-5 characters per WordPiece token, so a text 16x longer than
#: the budget in characters is about 3x over it. Counting such a text whole cost a full
#: tokenizer pass (the tokenizer reads ~100k characters/s on a busy core).
LONG_TEXT_FACTOR = 16


#: Most characters a chunk holds per token of budget (2,032 for MiniLM's 254): English
#: averages ~4-5 characters per WordPiece token, and no chunk of LoCoMo, LongMemEval or
#: SciFact is longer than 1,549 characters. WordPiece counts a word of more than 100
#: characters as one unknown token, so a hex dump or a 2 MB line without spaces fitted
#: "one token" and became one chunk that every hit returned whole (trial 16 F3).
MAX_CHARS_PER_TOKEN = 8


def _bounded(count: CountTokens) -> CountTokens:
    """Return ``count`` that also counts a text as at least one token per
    :data:`MAX_CHARS_PER_TOKEN` characters, so chunks are bounded in characters too."""

    def bounded(texts: Sequence[str]) -> list[int]:
        return [max(n, -(-len(t) // MAX_CHARS_PER_TOKEN)) for t, n in zip(texts, count(texts),
                                                                         strict=True)]

    return bounded


def _pieces(text: str, pattern: re.Pattern[str]) -> list[str]:
    return [p.strip() for p in pattern.split(text) if p.strip()]


def _split_long(piece: str, max_tokens: int, count: CountTokens) -> list[str]:
    """Split one piece that is over budget: by sentence, then by word windows.

    Each word is counted once and windows are packed by the sum of their words'
    counts (exact for WordPiece, which splits on whitespace first); a window that the
    tokenizer still finds over budget is halved. So every character is counted a bounded
    number of times, not once per word of its window (which made a 1 MB text take
    minutes).
    """
    sentences = _pieces(piece, _SENTENCE)
    if len(sentences) > 1:
        return _pack(sentences, max_tokens, count)
    words = _pieces(piece, _WORD)
    if len(words) <= 1:  # one long "word": kept when it fits, else cut on characters,
        if count([piece])[0] <= max_tokens:  # ~4 a token (counted once: bounded reads)
            return [piece]
        step = max(1, max_tokens * 4)
        return [piece[i : i + step] for i in range(0, len(piece), step)]
    windows: list[list[str]] = []
    used = 0
    for word, size in zip(words, count(words), strict=True):
        if windows and windows[-1] and used + size <= max_tokens:
            windows[-1].append(word)
            used += size
        else:
            windows.append([word])
            used = size
    return _within_budget(windows, max_tokens, count)


def _within_budget(windows: list[list[str]], max_tokens: int, count: CountTokens) -> list[str]:
    """Join each window of words; halve (recursively) any the tokenizer finds too long."""
    texts = [" ".join(w) for w in windows]
    out: list[str] = []
    for window, text, size in zip(windows, texts, count(texts), strict=True):
        if size <= max_tokens:
            out.append(text)
        elif len(window) == 1:  # one word over budget: cut on characters (_split_long)
            out.extend(_split_long(text, max_tokens, count))
        else:
            half = len(window) // 2
            out.extend(_within_budget([window[:half], window[half:]], max_tokens, count))
    return out


def _pack(pieces: list[str], max_tokens: int, count: CountTokens) -> list[str]:
    """Greedily join consecutive pieces while the joined text stays within budget."""
    sizes = count(pieces)
    chunks: list[str] = []
    current: list[str] = []
    used = 0
    for piece, size in zip(pieces, sizes, strict=True):
        if size > max_tokens:
            if current:
                chunks.append(" ".join(current))
                current, used = [], 0
            chunks.extend(_split_long(piece, max_tokens, count))
            continue
        if current and used + size > max_tokens:
            chunks.append(" ".join(current))
            current, used = [], 0
        current.append(piece)
        used += size
    if current:
        chunks.append(" ".join(current))
    return chunks


def split_text(text: str, max_tokens: int, count: CountTokens) -> list[str]:
    """Split ``text`` into chunks of at most ``max_tokens`` tokens and
    ``max_tokens * MAX_CHARS_PER_TOKEN`` characters each.

    Text within budget stays one chunk (whitespace kept as given). Longer text is split
    on paragraph breaks, then sentence ends, then words, and consecutive pieces are
    packed greedily up to the budget. Token counts come from the embedder
    (``count``), so the budget matches the model (254 content tokens for MiniLM,
    trained at 256 with [CLS] and [SEP]).

    :param max_tokens: the budget per chunk in model tokens, >= 1.
    :param count: returns each text's token count.
    :returns: non-empty chunk texts in document order; ``[]`` for blank text.
    :raises ValueError: ``max_tokens < 1``.
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
    if not text.strip():
        return []
    count = _bounded(count)
    # A text of more than LONG_TEXT_FACTOR characters per token of budget is split without
    # counting it whole first (it would not fit: that count was a wasted tokenizer pass).
    if len(text) <= LONG_TEXT_FACTOR * max_tokens and count([text])[0] <= max_tokens:
        return [text.strip()]
    paragraphs = _pieces(text, _PARAGRAPH)
    if len(paragraphs) == 1:  # counted once, as words, not as a paragraph too
        return _split_long(paragraphs[0], max_tokens, count)
    return _pack(paragraphs, max_tokens, count)


def word_count(texts: Sequence[str]) -> list[int]:
    """Estimate tokens as whitespace words times 1.3 (WordPiece averages ~1.3 per English word).

    Used when no embedder is configured, so chunks stay a sensible size anyway.
    """
    return [int(len(t.split()) * 1.3) + 1 for t in texts]


def embedding_text(chunk: Chunk) -> str:
    """Return the text a chunk is embedded as: its title (if any) and its text."""
    return f"{chunk.title}\n{chunk.text}" if chunk.title else chunk.text
