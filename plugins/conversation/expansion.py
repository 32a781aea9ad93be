"""The ``expansion`` feature: how strongly a turn holds words that *mean* the question's
words without being them ("What exercises has John done?" -> a turn saying "yoga").

Each word is embedded alone by the pipeline's embedder (:class:`WordVectors`). For a
question word ``q`` (:func:`expansion_words` of the question, the speakers' names left
out) and a candidate's word ``w`` that is not one of the question's words (nor the same
word after :func:`~octomem.engine.words.fold`), the match is ``cos(q, w)`` when it is at
least :data:`EXPANSION_TAU`, else 0, times ``w``'s IDF among the candidates (BM25's,
``max(log((n - df + 0.5) / (df + 0.5)), IDF_MIN)``, Robertson & Zaragoza 2009, as the
coverage columns weigh the question's own words). A turn's column is the sum over the
question's words of its best match: one word per question word, so a turn naming a
whole list of exercises counts once per question word.

Chosen on LoCoMo's tune half (conv-26/30/41/42/43) by leave-one-conversation-out refits
over ``benchmarks/fit_ranking.py``'s candidates (``benchmarks/results/conversations/fit.md``,
"Word expansion"): nDCG@10 0.6784 -> 0.6897, R@10 0.8261 -> 0.8437 over the candidates
(multi-hop R@10 0.569 -> 0.621 in the variants' script).

The vectors of the words of a fixed public list — the whole words of the model's own
tokenizer vocabulary — come from a table built once per machine per model in octomem's
cache folder (:mod:`.word_table`: 21,299 words, ~30 s of CPU once, 31 MiB, memory-mapped,
validated by sha256): it depends on the model alone, so it says nothing about what a
scope stores. Every other word is embedded alone when first met and kept per process
only, never written: forgetting a memory leaves no vector of its words in any file; its
cost is ~1.4 ms of CPU per word on 2 cores. The table covers 96.8 % of LoCoMo tune's
candidate word occurrences and 90.6 % of LongMemEval tune's (40.6 % of its distinct
words: a long tail of rare words stays live). A fresh process's first LoCoMo tune
question now pays 0.18 s of CPU for the column (was 2.4 s at load 9.9), every one of its
999 questions 4.4 s in all (was 14.1 s); on LongMemEval tune, whose haystacks differ per
question, the first pays 3.4 s (was 14.9 s) and the median 1.7 s (was 2.3 s) with long
turns as candidates (``benchmarks/results/conversations/word-expansion-cold/``). The
column is the same bit for bit either way (one word per onnxruntime call). With the
words kept, ~0.85 ms of CPU per recall (fit.md).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from octomem.engine.words import FUNCTION_WORDS, WORD, fold

if TYPE_CHECKING:
    import numpy as np

    from .word_table import WordTable

#: Least cosine between two words embedded alone for one to count as the other's
#: expansion (all-MiniLM-L6-v2 int8: "exercises"/"yoga" 0.58, "instruments"/"violin"
#: 0.63, "games"/"book" 0.41). Chosen on LoCoMo tune among 0.35-0.55 (fit.md, "Word
#: expansion": every value in that range gave +0.015-0.020 R@10 over the candidates).
EXPANSION_TAU = 0.45
#: The embedder whose word cosines :data:`EXPANSION_TAU` and the weights were fitted on
#: (a model id prefix); with any other embedder the column is 0.
EXPANSION_EMBEDDER = "fastembed:all-MiniLM-L6-v2-int8"
#: Words whose vectors one process keeps (first in, first out): 384 float32 each,
#: ~1.5 kB, so ~75 MB at most.
WORD_CAPACITY = 50_000
#: Words embedded per call of the embedder.
BATCH = 256
#: Least IDF weight of a word among the candidates (as the coverage columns').
IDF_MIN = 0.01
#: What :meth:`WordVectors.grouped_rows` reads for a tuple it has not kept.
_NONE: tuple[None, None] = (None, None)


def expansion_words(text: str) -> tuple[str, ...]:
    """Return ``text``'s distinct case-folded words of 3 letters or more, in order of
    first appearance, without :data:`~octomem.engine.words.FUNCTION_WORDS` and numbers
    (as typed: "exercises", not its folded "exercis", which embeds as no word)."""
    out = dict.fromkeys(w.casefold() for w in WORD.findall(text))
    return tuple(w for w in out if len(w) >= 3 and not w.isdigit() and w not in FUNCTION_WORDS)


class WordVectors:
    """Vectors of single words from ``embedder``, kept for the process, each word a row.

    A word's row also knows its :func:`~octomem.engine.words.fold` (as a key shared with
    every word spelt like it), so a question's own words are told apart without a
    Python loop over the candidates' words.

    :param embedder: an :class:`~octomem.engine.arms.Embedder`.
    :param capacity: rows kept; past it every row is dropped and the words asked for
        are embedded again (rows are only valid within one :meth:`rows` call's query).
    :param table: vectors of a public word list (:mod:`.word_table`), copied from it
        instead of embedded; may be set later (:attr:`table`), e.g. once built.
    """

    def __init__(self, embedder: Any, capacity: int = WORD_CAPACITY,
                 table: WordTable | None = None) -> None:
        import numpy as np

        self.embedder = embedder
        self.capacity = capacity
        self.table = table
        self._lock = threading.Lock()
        self._ids: dict[str, int] = {}
        self._keys: dict[str, int] = {}  # a word or a fold -> its key
        self._keyed = np.zeros((0, 2), dtype=np.int64)  # row -> (word key, fold key)
        self._store = np.zeros((0, int(embedder.dim)), dtype=np.float32)
        self._key_of, self._matrix = self._keyed, self._store  # the rows in use
        # id of a candidate's words -> (the words, held, so the id is not reused; their
        # rows): valid until the rows are dropped
        self._groups: dict[int, tuple[tuple[str, ...], np.ndarray]] = {}

    def rows(self, words: Sequence[str], spellings: Sequence[str] = (),
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]:
        """Return each word's row, embedding (in batches of :data:`BATCH`) the words not
        kept, the current vectors and keys, and the key of each of ``spellings``.

        :returns: ``(len(words),)`` int64 rows; ``(rows, dim)`` float32 unit vectors;
            ``(rows, 2)`` int64 keys of each row's word and of its fold; the key of each
            spelling (a word or a fold; -1 when no kept word is spelt so).
        :raises EmbedderUnavailableError: the embedder cannot load its model.
        """
        import numpy as np

        with self._lock:
            new = set(words).difference(self._ids)
            if new and len(self._ids) + len(new) > self.capacity:
                self._ids.clear()
                self._keys.clear()
                self._groups.clear()
                # new arrays: a query still reading the old rows keeps them intact
                self._keyed = np.zeros((0, 2), dtype=np.int64)
                self._store = np.zeros((0, self._store.shape[1]), dtype=np.float32)
                self._key_of, self._matrix = self._keyed, self._store
                new = set(words)
            if new:
                self._add(sorted(new))
            rows = np.fromiter(map(self._ids.__getitem__, words), dtype=np.int64,
                               count=len(words))
            keys = [self._keys.get(w, -1) for w in spellings]
            return rows, self._matrix, self._key_of, keys

    def grouped_rows(self, words: Sequence[str], spellings: Sequence[str],
                     *groups: Sequence[tuple[str, ...]],
                     ) -> tuple[np.ndarray, list[np.ndarray], np.ndarray, np.ndarray, list[int]]:
        """Return :meth:`rows` of ``words`` and of the words of each sequence of word tuples
        in ``groups`` (each candidate's words), flattened in order, as one call of
        :meth:`rows` with ``[*words, *flat(groups[0]), ...]`` would: the same rows, the
        same words embedded. A tuple's rows are kept (up to :attr:`capacity` tuples, first
        in, first out, dropped with the rows), so a candidate met again costs one dict
        look-up instead of one per word.

        :returns: ``(len(words),)`` int64 rows; per group, ``(Σ len(tuple),)`` int64 rows;
            ``(rows, dim)`` float32 unit vectors; ``(rows, 2)`` int64 keys; the key of each
            spelling (-1: no kept word is spelt so).
        :raises EmbedderUnavailableError: the embedder cannot load its model.
        """
        import numpy as np

        with self._lock:
            kept = self._groups
            fresh = {id(t): t for group in groups for t in group
                     if kept.get(id(t), _NONE)[0] is not t}
            new = set(words).union(*fresh.values()).difference(self._ids)
            if new and len(self._ids) + len(new) > self.capacity:
                self._ids.clear()
                self._keys.clear()
                kept.clear()
                self._keyed = np.zeros((0, 2), dtype=np.int64)
                self._store = np.zeros((0, self._store.shape[1]), dtype=np.float32)
                self._key_of, self._matrix = self._keyed, self._store
                fresh = {id(t): t for group in groups for t in group}
                new = set(words).union(*fresh.values())
            if new:
                self._add(sorted(new))
            ids = self._ids
            for key, t in fresh.items():
                if len(kept) >= self.capacity:
                    del kept[next(iter(kept))]
                kept[key] = (t, np.fromiter(map(ids.__getitem__, t), dtype=np.int64,
                                            count=len(t)))
            rows = np.fromiter(map(ids.__getitem__, words), dtype=np.int64, count=len(words))
            empty = np.zeros(0, dtype=np.int64)
            flat = [np.concatenate([empty, *[kept[id(t)][1] for t in group]])
                    for group in groups]
            keys = [self._keys.get(w, -1) for w in spellings]
            return rows, flat, self._matrix, self._key_of, keys

    def _vectors(self, words: list[str]) -> np.ndarray:
        """Return ``(len(words), dim)`` float32 rows: from :attr:`table` for its words, the
        others embedded (in batches of :data:`BATCH`)."""
        import numpy as np

        out = np.empty((len(words), self._store.shape[1]), dtype=np.float32)
        table = self.table
        found = [] if table is None else [
            (i, r) for i, r in enumerate(map(table.index.get, words)) if r is not None]
        if found:
            at, rows = np.array(found, dtype=np.int64).T
            out[at] = table.vectors[rows]  # type: ignore[union-attr]  # (found is non-empty)
        live = sorted(set(range(len(words))).difference(i for i, _ in found))
        for i in range(0, len(live), BATCH):
            part = live[i:i + BATCH]
            out[part] = self.embedder.embed_documents([words[j] for j in part])
        return out

    def _add(self, words: list[str]) -> None:
        """Embed ``words`` (none kept yet) into new rows; the arrays grow by doubling."""
        import numpy as np

        vectors = self._vectors(words)
        keys = self._keys
        key_of = np.array([(keys.setdefault(w, len(keys)), keys.setdefault(fold(w), len(keys)))
                           for w in words], dtype=np.int64)
        start = len(self._ids)
        end = start + len(words)
        if end > len(self._store):
            grown = max(end, 2 * len(self._store), 1024)
            store = np.zeros((grown, vectors.shape[1]), dtype=np.float32)
            store[:start] = self._store[:start]
            keyed = np.zeros((grown, 2), dtype=np.int64)
            keyed[:start] = self._keyed[:start]
            self._store, self._keyed = store, keyed
        self._store[start:end] = vectors
        self._keyed[start:end] = key_of
        self._ids.update((w, start + i) for i, w in enumerate(words))
        self._matrix, self._key_of = self._store[:end], self._keyed[:end]


def expansion_column(question: Sequence[str], names: Iterable[str],
                     turn_words: Sequence[Sequence[str]], vectors: WordVectors,
                     tau: float = EXPANSION_TAU) -> np.ndarray:
    """Return the ``expansion`` column of ``n`` candidates (module docstring).

    :param question: :func:`expansion_words` of the question.
    :param names: the speakers' names, case-folded (not expanded: "John" is no category).
    :param turn_words: each candidate's :func:`expansion_words`.
    :returns: ``(n,)`` float64, >= 0; zeros when the question has no word to expand.
    :raises EmbedderUnavailableError: the embedder cannot load its model.
    """
    return word_columns(question, names, turn_words, vectors, tau)[0]


def word_columns(question: Sequence[str], names: Iterable[str],
                 turn_words: Sequence[Sequence[str]], vectors: WordVectors,
                 tau: float = EXPANSION_TAU,
                 text_words: Sequence[Sequence[str]] | None = None,
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Return the ``expansion`` column of ``n`` candidates and each question word's best
    match in each candidate's text, from one matrix of word cosines.

    The best match of a question word ``q`` in a turn is 1 when the turn holds ``q``
    itself, as typed, else the largest cosine between ``q`` and a word of the turn, with
    no threshold (0 for a turn without words): what the ``soft_*`` coverage columns of
    :func:`~.features.soft_coverage` weigh. (Counting a word of the same
    :func:`~octomem.engine.words.fold` as 1 too, as the expansion column leaves it out,
    lowered the LoCoMo tune refit: nDCG@10 / R@10 over the candidates 0.7027 / 0.8522 ->
    0.6996 / 0.8459, ``benchmarks/results/conversations/ranking-2026-12-03``.)

    :param question: :func:`expansion_words` of the question.
    :param names: the speakers' names, case-folded (left out of the question's words).
    :param turn_words: each candidate's :func:`expansion_words` (title and text).
    :param text_words: each candidate's words the best matches are taken over (its text
        without its title: a session's date says nothing of what a turn is about);
        default ``turn_words``.
    :returns: ``(n,)`` float64 ``expansion`` (>= 0) and ``(n, Q)`` float64 best matches
        (``Q``: the question's words without the names; ``(n, 0)`` without any).
    :raises EmbedderUnavailableError: the embedder cannot load its model.
    """
    import numpy as np

    n = len(turn_words)
    out = np.zeros(n)
    skip = set(names)
    asked = [w for w in question if w not in skip]
    texts = turn_words if text_words is None else text_words
    lengths = np.fromiter(map(len, turn_words), dtype=np.int64, count=n)
    text_lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    best = np.zeros((n, len(asked)))
    if not asked or not n or not (lengths.any() or text_lengths.any()):
        return out, best
    asked_rows, (flat, flat_text), matrix, key_of, own = vectors.grouped_rows(
        asked, [w for q in asked for w in (q, fold(q))], turn_words, texts)
    unique, inverse, inverse_text = _unique(len(matrix), flat, flat_text)
    own_keys = np.asarray(own, dtype=np.int64).reshape(len(asked), 2)
    keys = key_of[unique]
    mine = (keys[:, :, None] == own_keys.ravel()).any(axis=(1, 2))  # it, or its fold, is asked
    # (Q, U) cosines; einsum's own loop, not BLAS: a (3, 384) x (384, 750) product took
    # 6 ms through OpenBLAS's threads on 2 busy cores, 0.4 ms here
    raw = np.einsum("qd,ud->qu", matrix[asked_rows], matrix[unique])
    if lengths.any():
        cos = np.where((raw >= tau) & ~mine, raw, 0.0).astype(np.float64)
        df = np.bincount(inverse, minlength=len(unique)).astype(np.float64)
        idf = np.maximum(np.log((n - df + 0.5) / (df + 0.5)), IDF_MIN)
        match = (cos * idf)[:, inverse]                                 # (Q, flat)
        holds = lengths > 0
        starts = (np.cumsum(lengths) - lengths)[holds]
        out[holds] = np.maximum.reduceat(match, starts, axis=1).sum(axis=0)
    if text_lengths.any():  # the word itself, as typed, is 1 (its fold is not: fit.md)
        itself = keys[None, :, 0] == own_keys[:, 0, None]
        soft = np.where(itself, 1.0, raw.astype(np.float64))[:, inverse_text]  # (Q, flat)
        holds = text_lengths > 0
        starts = (np.cumsum(text_lengths) - text_lengths)[holds]
        best[holds] = np.maximum.reduceat(soft, starts, axis=1).T
    return out, best


def _unique(size: int, *parts: np.ndarray) -> tuple[np.ndarray, ...]:
    """Return the distinct rows of ``parts`` (ascending) and each part's indices into them:
    ``np.unique(np.concatenate(parts), return_inverse=True)`` split back into the parts,
    through a mark per row of the ``size`` rows instead of a sort.

    :param parts: int64 row indices, each in ``[0, size)``.
    :returns: ``(U,)`` int64 distinct rows, then one int64 array of indices per part.
    """
    import numpy as np

    marked = np.zeros(size, dtype=bool)
    for part in parts:
        marked[part] = True
    unique = np.flatnonzero(marked)
    place = np.cumsum(marked) - 1  # row -> its index among the distinct rows
    return (unique, *(place[part] for part in parts))
