"""Token ceilings of a whole batch of texts by numpy array operations, which run without
the GIL.

The ingest's worker thread finds, per text, a number its BERT WordPiece count cannot
exceed (:meth:`~.wordpiece_count.WordPieceCounter.ceilings`), while the caller's thread
writes the batch before it. Done text by text in Python, that held the GIL for ~0.06 s
per 10k texts, and the writer, which needs the GIL back after every SQLite statement,
waited for it (``benchmarks/results/ingest/2026-12-03-round12``). Here a batch's texts
are joined into one byte per character and every step is a numpy operation over the
whole batch (a comparison, a gather, a cumulative sum, a binary search, a hash-table
probe), each of which releases the GIL while it runs; what holds it is a few C calls
per batch (a join, an encoding, two ``bytes.translate``)
(``benchmarks/results/ingest/2026-12-03-round13``).

The bound (:func:`batch_ceilings`), per text: the sum over its characters of 0 for ASCII
whitespace (space, tab, newline, carriage return), 1 for any other ASCII character,
:data:`~.wordpiece_count.EXPANSION` for a character beyond ASCII; less, for each *clean*
run of ASCII letters and digits (its neighbours on both sides ASCII whitespace, ASCII
punctuation or the text's ends) whose lowercase is a vocabulary entry, its length less
one (it is one token). Why it holds: BERT's normalizer leaves an ASCII character one
character (controls dropped, whitespace a space, letters lowercased) and makes at most
:data:`~.wordpiece_count.EXPANSION` of any other; NFD moves only combining marks, which
never cross an ASCII character; so a clean run is one pre-token of its own, lowercased,
and every other pre-token's pieces are at most its characters, each counted here at
least once. A run next to anything else (a control BERT drops, an accented letter whose
base joins it) is counted by its characters only. A text still over a threshold has its
other clean runs bounded by their longest vocabulary prefix (:func:`_prefix_gains`). A
text that may hold an added token (``[SEP]``, ...; matched before the normalizer) gets its
characters' sum alone, as :meth:`~.wordpiece_count.WordPieceCounter.ceilings` gives it.
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Collection, Sequence
from typing import Any

import numpy as np

#: Longest vocabulary entry looked up, in bytes (two 64-bit words). Of MiniLM's 22,680
#: entries a run of ASCII letters and digits can equal, 3 are longer (17-18 letters):
#: a run equal to one is counted by its characters.
KEY_BYTES = 16


def _class_table() -> bytes:
    """Return the ``bytes.translate`` table of a character class per byte of
    :func:`_bytes_of`: 0 ASCII whitespace (space, tab, newline, carriage return), 1 ASCII
    punctuation (BERT's: every printable character other than letters, digits and the
    space), 2 a letter or digit, 3 another ASCII character (a control BERT drops, DEL),
    4 a character beyond ASCII (:data:`BEYOND`)."""
    table = bytearray([4]) * 256
    for byte in range(128):
        char = chr(byte)
        table[byte] = 2 if char.isalnum() else 0 if char in " \t\n\r" else \
            1 if 0x21 <= byte <= 0x7E else 3
    return bytes(table)


#: The byte a character beyond ASCII becomes in :func:`_bytes_of` (one byte per character,
#: so that a text's characters and bytes have the same offsets).
BEYOND = 0x80
_CLASS = _class_table()
#: ASCII letters lowercased, every other byte kept.
_LOWER = bytes(ord(chr(b).lower()) if b < 128 else b for b in range(256))
WHITESPACE, PUNCTUATION, WORD, OTHER, BEYOND_ASCII = range(5)


def _beyond(error: UnicodeError) -> tuple[bytes, int]:
    """Encode each character of an ASCII encoding error's range as :data:`BEYOND`."""
    assert isinstance(error, UnicodeEncodeError)
    return bytes([BEYOND]) * (error.end - error.start), error.end


codecs.register_error("octomem-beyond-ascii", _beyond)


def _bytes_of(texts: Sequence[str]) -> tuple[bytes, np.ndarray]:
    """Return the texts joined by newlines, with a newline before the first and after the
    last, one byte per character (ASCII as itself, any other character :data:`BEYOND`),
    and each text's start in it (``(len(texts) + 1,)`` int64; the last one the length:
    text ``i`` and the newline after it are ``starts[i]:starts[i + 1]``)."""
    data = "\n".join(["", *texts, ""]).encode("ascii", "octomem-beyond-ascii")
    starts = np.empty(len(texts) + 1, np.int64)
    starts[0] = 1
    np.cumsum(np.fromiter(map(len, texts), np.int64, len(texts)) + 1, out=starts[1:])
    starts[1:] += 1
    return data, starts


class VocabularyKeys:
    """The vocabulary entries a run of ASCII letters and digits can equal, in an
    open-addressing hash table (linear probing, Knuth 1998, TAOCP vol. 3, 6.4) of their
    bytes zero-padded to :data:`KEY_BYTES`, looked up by array operations: each probe
    step one gather and one comparison over every key still unresolved.

    :param entries: lowercase ASCII letters and digits, two or more characters (the keys
        of :func:`~.wordpiece_ceilings.shorter_words`); longer ones than
        :data:`KEY_BYTES` are left out (never found: the bound is looser, not wrong).
    """

    #: The table has 2**BITS slots before its overflow (MiniLM: 22,677 keys, load 0.17,
    #: at most 4 probes; 2 MiB).
    BITS = 17

    def __init__(self, entries: Collection[bytes]) -> None:
        # fixed-width bytes, zero-padded, in C (the entries hold no zero byte: an entry
        # is as long as its bytes before the first zero); kept: 2 to KEY_BYTES bytes
        padded = np.array(list(entries) or [b""], np.bytes_)
        width = padded.dtype.itemsize
        rows = padded.view(np.uint8).reshape(len(padded), width)
        keep = rows[:, 1] != 0 if width > 1 else np.zeros(len(rows), np.bool_)
        if width > KEY_BYTES:
            keep &= rows[:, KEY_BYTES] == 0
        rows = rows[keep, :KEY_BYTES]
        words = np.zeros((len(rows), KEY_BYTES), np.uint8)
        words[:, :rows.shape[1]] = rows
        words = words.view(np.uint64)
        home = _home(words[:, 0], words[:, 1], self.BITS)
        order = np.argsort(home)
        home = home[order]
        rank = np.arange(len(home))
        # linear probing, keys placed in order of their home slot: each at its home or
        # right after the key before it, whichever is later
        slots = np.maximum.accumulate(home - rank) + rank if len(home) else home
        #: probes a lookup needs at most (a key's distance from its home, plus one)
        self.probes = int((slots - home).max()) + 1 if len(home) else 0
        size = (1 << self.BITS) + self.probes + 1
        #: the entries' first and second 8 bytes by slot (0: an empty slot)
        self.first, self.second = np.zeros(size, np.uint64), np.zeros(size, np.uint64)
        self.first[slots], self.second[slots] = words[order, 0], words[order, 1]

    def tables(self) -> tuple[int, bytes, bytes]:
        """Return ``(probes, first, second)``: what :meth:`of_tables` makes these keys of
        again (the slots' bytes, native order), for :mod:`.vocab_cache`."""
        return self.probes, self.first.tobytes(), self.second.tobytes()

    @classmethod
    def of_tables(cls, probes: int, first: bytes, second: bytes) -> VocabularyKeys | None:
        """Return the keys whose :meth:`tables` are these (the arrays read in place, not
        copied), or ``None`` when they are not tables of this layout (:data:`BITS`)."""
        size = (1 << cls.BITS) + probes + 1
        if not (isinstance(probes, int) and 0 <= probes and isinstance(first, bytes)
                and isinstance(second, bytes) and len(first) == len(second) == 8 * size):
            return None
        keys = cls.__new__(cls)
        keys.probes = probes
        keys.first = np.frombuffer(first, np.uint64)
        keys.second = np.frombuffer(second, np.uint64)
        return keys

    def contains(self, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """Return, per key (its first and second 8 bytes, zero-padded, ``(m,)`` uint64
        each; the first byte not zero), whether it is an entry (``(m,)`` bool)."""
        home = _home(first, second, self.BITS)
        at = self.first.take(home)
        found = (at == first) & (self.second.take(home) == second)
        # an empty slot ends a key's probe sequence: not an entry
        pending = np.flatnonzero(~found & (at != 0))
        for step in range(1, self.probes):
            if not len(pending):
                break
            slot = home[pending] + step
            at = self.first.take(slot)
            hit = (at == first[pending]) & (self.second.take(slot) == second[pending])
            found[pending[hit]] = True
            pending = pending[~hit & (at != 0)]
        return found


def _home(first: np.ndarray, second: np.ndarray, bits: int) -> np.ndarray:
    """Return each key's home slot (``(m,)`` intp, below ``2**bits``): the top bits of a
    multiplicative hash of its two 64-bit words (Knuth's constant; wrapping arithmetic)."""
    with np.errstate(over="ignore"):
        mixed = (first ^ (second * np.uint64(0xC2B2AE3D27D4EB4F))) \
            * np.uint64(0x9E3779B97F4A7C15)
    home: np.ndarray = (mixed >> np.uint64(64 - bits)).astype(np.intp)
    return home


class BatchCeilings:
    """Ceilings of batches of texts (:func:`batch_ceilings`) for one vocabulary.

    :param entries: as :class:`VocabularyKeys`, or those keys already made.
    :param expansion: the most characters BERT's normalizer makes of one character.
    :param added_first: the characters an added token can start with (a text holding
        one of them is checked by ``holds_added``).
    :param holds_added: True when a text holds an added token (no refinement then).
    """

    def __init__(self, entries: Collection[bytes] | VocabularyKeys, expansion: int,
                 added_first: str, holds_added: Callable[[str], bool]) -> None:
        self.keys = entries if isinstance(entries, VocabularyKeys) else VocabularyKeys(entries)
        self.expansion = expansion
        #: ``bytes.translate`` tables: each byte's share of the bound (ASCII whitespace 0,
        #: other ASCII 1, :data:`BEYOND` ``expansion``); 1 for a byte an added token can
        #: start with (:data:`BEYOND`: any character beyond ASCII), else 0
        self.shares = bytes(0 if c == WHITESPACE else expansion if c == BEYOND_ASCII else 1
                            for c in _CLASS)
        added = bytearray(256)
        for char in added_first:
            added[min(ord(char), BEYOND)] = 1
        self.added = bytes(added)
        self.holds_added = holds_added

    @classmethod
    def of(cls, counter: Any) -> BatchCeilings:
        """Return the tables of a :class:`~.wordpiece_count.WordPieceCounter`: its
        vocabulary's run entries (its :class:`VocabularyKeys` when it was given them,
        from :mod:`.vocab_cache`), its added tokens' first characters (both cases) and
        its test for them."""
        from .bert_text import EXPANSION

        first = "".join({c for a in counter._added if a for c in (a[0], a[0].upper())})
        keys = counter._keys
        return cls(keys if isinstance(keys, VocabularyKeys) else counter._shorter_words(),
                   EXPANSION, first, counter._holds_added)

    def __call__(self, texts: Sequence[str], refine_above: int | None = None) -> list[int]:
        """Return each text's ceiling (:func:`batch_ceilings`)."""
        return batch_ceilings(self, texts, refine_above)


def batch_ceilings(tables: BatchCeilings, texts: Sequence[str],
                   refine_above: int | None = None) -> list[int]:
    """Return, per text, a number its BERT WordPiece count (special tokens excluded)
    cannot exceed: its characters' sum, and for a text above ``refine_above`` the module
    docstring's bound (its clean runs in the vocabulary taken off), and for one still
    above, less what its other clean runs' vocabulary prefixes take off
    (:func:`_prefix_gains`).

    Few array operations on the whole batch, as each one takes the GIL back when it ends
    (the writer thread holds it between its statements): every character's share of the
    bound in one array, what a run in the vocabulary takes off subtracted at its first
    character, then one sum per text (``np.add.reduceat``).

    :param texts: any strings (an empty one: 0).
    :param refine_above: only texts whose characters' sum is above this are looked at
        word by word, and their prefixes looked up when still above; ``None``: every
        text word by word, no prefixes.
    :returns: one ceiling per text, in order.
    """
    if not texts:
        return []
    data, starts = _bytes_of(texts)
    ceilings = np.add.reduceat(np.frombuffer(data.translate(tables.shares), np.uint8),
                               starts[:-1], dtype=np.int64)
    if refine_above is None:
        return _refined(tables, texts, data, starts, None).tolist()
    above = np.flatnonzero(ceilings > refine_above)
    if len(above):  # the others fit by their characters: no word looked up
        chosen = [texts[i] for i in above.tolist()]
        ceilings[above] = _refined(tables, chosen, *_bytes_of(chosen), refine_above)
    out: list[int] = ceilings.tolist()
    return out


def _refined(tables: BatchCeilings, texts: Sequence[str], data: bytes, starts: np.ndarray,
             refine_above: int | None) -> np.ndarray:
    """Return :func:`batch_ceilings` of ``texts`` (``data`` and ``starts`` as
    :func:`_bytes_of` gives them), each looked at word by word (``(len(texts),)`` int)."""
    # a byte's share is at most the expansion, a run's first byte's at least 1 - 15: int8
    shares = np.frombuffer(data.translate(tables.shares), np.int8).copy()
    classes = np.frombuffer(data.translate(_CLASS), np.uint8)
    # runs of letters and digits: the data starts and ends with a newline, so each run's
    # start (a +1 step) comes before its end (-1); both are where the step lands
    steps = np.flatnonzero(np.diff((classes == WORD).view(np.int8)))
    before, last = steps[0::2], steps[1::2]  # the byte before a run, its last byte
    lengths = last - before
    run_starts = before + 1
    clean = (classes.take(before) <= PUNCTUATION) & (classes.take(last + 1) <= PUNCTUATION)
    # the 8 bytes at every offset (and 16 past the end), read in place
    words = np.ndarray((len(data) + KEY_BYTES - 7,), "<u8",
                       buffer=data.translate(_LOWER) + bytes(KEY_BYTES), strides=(1,))
    found = clean & (lengths >= 2) & (lengths <= KEY_BYTES) \
        & tables.keys.contains(*_keys(words, run_starts, lengths))
    shares[run_starts] -= np.where(found, lengths - 1, 0).astype(np.int8)
    ceilings = np.add.reduceat(shares, starts[:-1], dtype=np.int64)
    if refine_above is not None and (over := ceilings > refine_above).any():
        tried = np.flatnonzero(clean & ~found & (lengths >= 3))
        text_of = np.searchsorted(starts, run_starts.take(tried), side="right") - 1
        tried = tried[over.take(text_of)]
        if len(tried):
            shares[run_starts[tried]] -= _prefix_gains(
                tables.keys, words, run_starts[tried], lengths[tried]).astype(np.int8)
            ceilings = np.add.reduceat(shares, starts[:-1], dtype=np.int64)
    marked = np.add.reduceat(np.frombuffer(data.translate(tables.added), np.uint8),
                             starts[:-1], dtype=np.int64)
    for i in np.flatnonzero(marked).tolist():
        if tables.holds_added(texts[i]):  # no refinement: its characters' sum
            ceilings[i] = _characters(texts[i], tables.expansion)
    return ceilings


def _characters(text: str, expansion: int) -> int:
    """Return a text's characters' sum (the module docstring's bound without runs)."""
    beyond = len(text) - len(text.encode("ascii", "ignore"))
    return len(text) - sum(map(text.count, " \t\n\r")) + (expansion - 1) * beyond


#: ``_MASKS[n]``: the low ``n`` bytes of a 64-bit word (n = 0..8).
_MASKS = np.array([(1 << (8 * n)) - 1 for n in range(9)], np.uint64)


def _keys(words: np.ndarray, at: np.ndarray, lengths: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray]:
    """Return the first and second 8 bytes (zero-padded) of the ``lengths`` bytes at
    ``at`` in the text whose 8-byte words at every offset are ``words``."""
    first = words.take(at) & _MASKS.take(np.minimum(lengths, 8))
    second = words.take(at + 8) & _MASKS.take(np.clip(lengths - 8, 0, 8))
    return first, second


def _prefix_gains(keys: VocabularyKeys, words: np.ndarray, run_starts: np.ndarray,
                  lengths: np.ndarray) -> np.ndarray:
    """Return per run (not an entry, 3 or more characters) k - 1 for its longest prefix
    of k characters (2 <= k <= :data:`KEY_BYTES`, k < its length) that is an entry, else 0.

    Why it holds: WordPiece's first piece of a word is the longest entry the word starts
    with (greedy longest match first), so at least k characters; every later piece covers
    at least one; a word with a rest that matches nothing is one ``[UNK]``. So a word of
    n characters is at most 1 + n - k pieces, k - 1 fewer than n.
    """
    # every (run, k) pair, k = 2 .. min(n - 1, KEY_BYTES), looked up at once
    tries = np.minimum(lengths - 1, KEY_BYTES) - 1
    first = np.zeros(len(tries) + 1, np.int64)
    np.cumsum(tries, out=first[1:])
    run = np.repeat(np.arange(len(tries)), tries)
    k = np.arange(first[-1]) - first[run] + 2
    hit = keys.contains(*_keys(words, run_starts[run], k))
    gains: np.ndarray = np.maximum.reduceat(np.where(hit, k - 1, 0), first[:-1]) \
        if len(tries) else np.zeros(0, np.int64)
    return gains
