"""What BERT's normalizer and pre-tokenizer make of a text, as far as counting its tokens
needs: which ``tokenizer.json`` is the uncased BERT WordPiece kind
:class:`~.wordpiece_count.WordPieceCounter` reproduces (:func:`is_bert_wordpiece`), which
texts they leave plain (:func:`plain`: lowercased, split into :data:`PRE_TOKEN`'s
pre-tokens), and the most characters the normalizer makes of one (:data:`EXPANSION`).
Used by the exact counts (:mod:`.wordpiece_count`) and their ceilings
(:mod:`.ceiling_arrays`); the reasoning is in :mod:`.wordpiece_count`'s docstring.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path
from typing import Any

#: Plain ASCII: BERT's normalizer only lowercases it.
ASCII = re.compile(r"[\x20-\x7e\t\n\r]*\Z")
#: BERT's pre-tokens of a lowercased text of :func:`plain` characters: letter-digit runs,
#: or one punctuation character (whitespace separates and is dropped).
PRE_TOKEN = re.compile(r"[a-z0-9]+|[^\sa-z0-9]")
#: The pre-tokens of :data:`PRE_TOKEN` longer than one character (runs of letters and
#: digits: a run is found whole, as there).
LONG_WORD = re.compile(r"[a-z0-9]{2,}")
ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
#: The most characters other than spaces that BERT's normalizer makes of one character (a
#: Hangul syllable: three jamo after NFD); a test checks every code point with the
#: ``tokenizers`` library's own normalizer.
EXPANSION = 3


def is_bert_wordpiece(tokenizer_json: Path | dict[str, Any]) -> bool:
    """Return True when ``tokenizer.json`` describes an uncased BERT WordPiece tokenizer
    (the only kind :class:`~.wordpiece_count.WordPieceCounter` reproduces).

    :param tokenizer_json: the file, or its parsed content.
    :raises OSError: the file cannot be read.
    """
    spec = tokenizer_json if isinstance(tokenizer_json, dict) else json.loads(
        tokenizer_json.read_text(encoding="utf-8"))
    normalizer = spec.get("normalizer") or {}
    return (normalizer.get("type") == "BertNormalizer" and normalizer.get("lowercase") is True
            and normalizer.get("clean_text") is True
            and (spec.get("pre_tokenizer") or {}).get("type") == "BertPreTokenizer"
            and (spec.get("model") or {}).get("type") == "WordPiece")


_SAFE: dict[str, bool] = {}


def plain(text: str) -> bool:
    """Return True when BERT's normalizer and pre-tokenizer treat ``text`` as
    :data:`PRE_TOKEN` splits it (printable ASCII, tab, newline, carriage return, ``Zs``
    spaces, and punctuation that decomposition and lowercasing leave unchanged)."""
    if ASCII.match(text):
        return True
    for char in set(text):
        safe = _SAFE.get(char)
        if safe is None:
            category = unicodedata.category(char)
            safe = _SAFE[char] = bool(
                ASCII.match(char) or category == "Zs" or (
                    category.startswith("P") and unicodedata.normalize("NFD", char) == char
                    and char.lower() == char))
        if not safe:
            return False
    return True
