"""Token ceilings of BERT WordPiece counts by byte operations: the word-by-word bound of
a plain ASCII text, and the segment-by-segment bound of a text beyond ASCII.

:class:`~.wordpiece_count.WordPieceCounter` refines a text's character ceiling with these
when it is over the budget (its docstring and :meth:`~.wordpiece_count.WordPieceCounter.ceilings`
say why each bound holds). Both take ``shorter`` (:func:`shorter_words`): the vocabulary's
entries a run of letters and digits can equal, as bytes, each to its length less one (what
such a run in the vocabulary takes off a count of characters: it is one token).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from itertools import repeat

#: The vocabulary entries an ASCII run of letters and digits can equal (lowercase, two or
#: more characters: a one-character entry takes nothing off), one per line.
_RUN_ENTRY = re.compile(rb"(?m)^[a-z0-9]{2,}$")


def shorter_words(vocab: Collection[str]) -> dict[bytes, int]:
    """Return ``shorter`` for :func:`ascii_word_ceiling` and :func:`segment_ceiling`: each
    vocabulary entry a folded run can equal (lowercase ASCII letters and digits, two or
    more) as bytes, to its length less one.

    The runs those functions look up are lowercase ASCII letters and digits only, so no
    other entry is ever found: leaving them out changes no ceiling. Found by one regular
    expression over the entries joined by newlines (entries holding a newline, which are
    no run either, left out first so that no line is a part of one), instead of encoding
    each of the 30,522 entries: 9.3 -> 5.5 ms once per counter
    (``benchmarks/results/ingest/2026-12-03-round10``).
    """
    joined = "\n".join(vocab)
    if joined.count("\n") != max(len(vocab) - 1, 0):
        joined = "\n".join([entry for entry in vocab if "\n" not in entry])
    words = _RUN_ENTRY.findall(joined.encode("utf-8", "surrogatepass"))
    return dict(zip(words, map((-1).__add__, map(len, words)), strict=True))


def _ascii_fold() -> bytes:
    """Return the ``bytes.translate`` table of :func:`ascii_word_ceiling`: uppercase ASCII
    letters lowercased, ASCII punctuation (BERT's: every printable character other than
    letters, digits and the space) to ``\\x0b`` (whitespace to ``bytes.split``, still
    counted as a character), space, tab, newline and carriage return kept, every other byte
    (controls, DEL, beyond ASCII) to ``\\x00``, which marks a text that is not plain."""
    table = bytearray(256)  # every byte to \x00 unless set below
    for byte in b" \t\n\r":
        table[byte] = byte
    for byte in range(0x21, 0x7f):
        char = chr(byte)
        table[byte] = ord(char.lower()) if char.isalnum() else 0x0B
    return bytes(table)


_FOLD = _ascii_fold()


def ascii_word_ceiling(text: str, shorter: dict[bytes, int]) -> int | None:
    """Return the word-by-word ceiling of an ASCII ``text`` (its characters other than
    whitespace, less length - 1 for each run of letters and digits in the vocabulary), or
    ``None`` when it is not plain (a control character other than tab, newline and
    carriage return, or DEL).

    The sum :meth:`~.wordpiece_count.WordPieceCounter._word_ceiling` takes by a regular
    expression, by byte operations: one ``bytes.translate`` (:data:`_FOLD`) lowercases,
    turns punctuation into separators and marks what is not plain; ``split`` gives the runs
    of letters and digits; one dict lookup per run, in C. The 3,915 ASCII texts over budget
    by characters of the 10k ingest benchmark: 99 -> 47 ms CPU (load 7;
    ``benchmarks/results/ingest/2026-12-03-round8``).

    :param text: ASCII only (``text.isascii()``).
    """
    folded = text.encode("ascii").translate(_FOLD)
    if b"\x00" in folded:
        return None
    # punctuation (now \x0b) counts as a character: only whitespace is left out
    chars = len(folded) - folded.count(b" ") - folded.count(b"\n") - folded.count(b"\t") \
        - folded.count(b"\r")
    runs = folded.split()
    return chars - sum(map(shorter.get, runs, repeat(0, len(runs))))


def segment_ceiling(text: str, shorter: dict[bytes, int], expansion: int) -> int:
    """Return a ceiling of a text beyond ASCII that is not plain (accents, Greek letters,
    CJK): the sum over its segments between ASCII spaces (whose counts add up) of
    :func:`ascii_word_ceiling` for the ASCII ones, taken together (joined by spaces, their
    bounds add up too), and the character bound for the others (``expansion`` per
    character beyond ASCII, one per other character than a space or a newline).

    A word of letters next to a non-ASCII letter is not a pre-token of its own, so only
    whole ASCII segments are looked up. The 418 such texts over budget of the 10k ingest
    benchmark: 356 fit by this bound (11 ms) instead of being counted exactly (~60 ms with
    cold caches).
    """
    segments = text.split(" ")
    plain_part = " ".join([s for s in segments if s.isascii()])
    other = " ".join([s for s in segments if not s.isascii()])
    bound = ascii_word_ceiling(plain_part, shorter)
    if bound is None:  # an ASCII control: each character at most one token
        bound = len(plain_part) - plain_part.count(" ") - plain_part.count("\n")
    beyond = len(other) - len(other.encode("ascii", "ignore"))
    return bound + len(other) - other.count(" ") - other.count("\n") + (expansion - 1) * beyond
