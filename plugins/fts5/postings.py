"""An in-RAM copy of the ``fts5`` arm's postings, ranked with FTS5's own ``bm25()`` arithmetic.

FTS5 evaluates ``bm25()`` row by row: for an OR of SciFact's natural-language queries
that is ~17k rows at 100k chunks and ~30 ms (p50, 2 cores, realistic corpus), most of
it per-row overhead. Here each query term's postings are numpy arrays and a query is a
few vectorised gathers and adds over them (term-at-a-time accumulation, Turtle & Flood,
IP&M 31(6), 1995), so the cost is the postings touched, not SQLite's per-row calls.

The hits and scores are FTS5's, bit for bit: the same tokens (FTS5's ``porter
unicode61`` tokenizer, called through apsw: :mod:`.tokens`), the same N and average
length (live rows and their tokens), and ``bm25()``'s formula in its order of operations
(``fts5_aux.c``: IDF = ln((N - n + 0.5) / (n + 0.5)), 1e-6 when <= 0; per phrase
IDF * tf * (k1 + 1) / (tf + k1 * (1 - b + b * D / avgdl)), summed in phrase order,
k1 = 1.2, b = 0.75). A property test holds this against FTS5 after random writes.

The copy follows the FTS5 table like :class:`~octomem.plugins.sqlite_vec.matrix.VectorMatrix`
follows a vector set: loaded from ``chunks`` on first use (tokenizing every chunk:
~3 s per 100k chunks of ~65 tokens), then kept in step through the change log
(:mod:`~octomem.plugins.sqlite.changelog`), which the arm writes in the same transactions
as the index. Replaced or removed chunks leave dead slots; new ones get new slots and
small per-term arrays; past :data:`REBUILD_FRACTION` of either, the arrays are rebuilt.

Memory: ~6 bytes per posting (int32 slot, uint16 tf; uint32 once a count exceeds
65,535) plus ~25 bytes per chunk and the vocabulary: ~40 MiB held for 100k chunks of
~65 tokens (5.1M postings), ~3 s to load on 2 cores; the load peaks at ~4x that.
"""

from __future__ import annotations

import json
import logging
import threading
from array import array
from collections.abc import Sequence

import apsw
import numpy as np

from ..sqlite import snapshot_sync
from ..sqlite.filter_index import allowed_at
from . import maxscore
from .postings_snapshot import PostingSnapshots
from .ranking import fts5_totals
from .tokens import BODY, Tokenized, tokenize_rows

#: FTS5's ``bm25()`` constants (``fts5_aux.c``: k1 = 1.2, b = 0.75).
K1 = 1.2
B = 0.75
#: Rebuild the arrays once the dead slots or the slots added since the last build exceed
#: this fraction of the built ones: a rebuild re-sorts every posting (~1 s per 100k
#: chunks, inside the search that triggers it), while dead slots cost every query a
#: mask over its postings and added ones a second, unsorted posting array per term.
REBUILD_FRACTION = 0.1
#: ...but never for fewer than this many dead or added slots.
REBUILD_MIN = 2_000


log = logging.getLogger(__name__)


class PostingIndex(PostingSnapshots):
    """The postings of one FTS5 table as numpy arrays, kept in step with the table
    (starting from its snapshot beside the file when one matches).

    A *slot* is one indexed chunk; ``slot_ids[s]`` is its chunk id. Built slots are in
    ascending chunk id order (looked up by ``searchsorted``); slots added later are
    found through :attr:`added_slot`.

    Thread-safe: :meth:`sync` and :meth:`ranked` hold one lock.

    :param table: the FTS5 table whose rowids are chunk ids (it names the log's rows).
    """

    def __init__(self, table: str) -> None:
        self.table = table
        self.lock = threading.RLock()
        self.seq = -1  # -1: never loaded
        #: where its snapshots live (``db`` set by the arm; ``None``: none are used)
        self.snapshot = snapshot_sync.SnapshotState()
        self._clear()

    def _clear(self) -> None:
        self.vocab: dict[str, int] = {}
        self.slot_ids = np.zeros(0, dtype=np.int64)
        self.lengths = np.zeros(0, dtype=np.float64)
        self.live = np.zeros(0, dtype=bool)
        self.count = 0  # slots in use
        self.built = 0  # slots covered by the built (sorted) part
        self.live_rows = 0
        self.total_tokens = 0
        self.dead = 0
        self.added_slot: dict[int, int] = {}  # chunk id -> slot, for slots after ``built``
        self.ptr = np.zeros(1, dtype=np.int64)  # CSR over the built terms
        self.post_slots = np.zeros(0, dtype=np.int32)
        self.post_tfs = np.zeros(0, dtype=np.uint16)
        self.added: dict[int, tuple[array[int], array[int]]] = {}  # term -> (slots, tfs)
        self._norm: np.ndarray | None = None  # k1 * (1 - b + b * D / avgdl) per slot
        self._norm_min = 0.0  # its smallest value
        self._scores = np.zeros(0, dtype=np.float64)
        self._exact = True

    @property
    def loaded(self) -> bool:
        """True once the first :meth:`sync` has loaded the copy."""
        return self.seq >= 0

    @property
    def exact(self) -> bool:
        """True when the copy counts the rows and tokens FTS5 counts (checked at every
        :meth:`sync` that found changes), so its scores are FTS5's.

        False when FTS5 holds entries the copy cannot see, e.g. of chunks deleted while
        the ``fts5`` arm was not in the pipeline (their rows still count in FTS5's N
        and average length): then FTS5 must rank.
        """
        return self._exact

    # -- keeping in step -------------------------------------------------------------

    def sync(self, conn: apsw.Connection, restore_only: bool = False) -> bool:
        """Bring the copy up to date with the committed state of the table.

        Reads the log and the changed chunks inside one read transaction of ``conn``
        (:func:`~octomem.plugins.sqlite.snapshot_sync.sync`: a copy never loaded starts
        from a matching snapshot, :mod:`.postings_snapshot`).

        :param restore_only: never load the table whole (stay unloaded without a snapshot).
        :returns: True when the copy is loaded afterwards.
        """
        with self.lock, conn:
            seen = self.seq
            if not snapshot_sync.sync(self, conn, self.table, lambda: self._load_all(conn),
                                      lambda changed: self._apply(conn, changed), restore_only):
                return False
            if self.seq == seen:
                return True
            fts5 = fts5_totals(conn, self.table)
            self._exact = fts5 == (self.live_rows, self.total_tokens)
            if not self._exact:
                log.warning("%s: FTS5 counts entries without a stored chunk (%s rows and "
                            "tokens against %s); ranking with FTS5 itself", self.table,
                            fts5, (self.live_rows, self.total_tokens))
            return True

    def _load_all(self, conn: apsw.Connection) -> None:
        self._clear()
        exists = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (self.table,))
        if exists.fetchone() is None:
            return
        rows = conn.execute(f"SELECT id, {BODY} FROM chunks WHERE id IN "
                            f"(SELECT rowid FROM {self.table}) ORDER BY id")
        self._build(tokenize_rows(conn, rows, self.vocab))

    def _build(self, docs: Tokenized) -> None:
        """Make the built part from ``docs`` (ascending chunk ids), dropping the rest."""
        n = len(docs.ids)
        self.slot_ids = docs.numpy("ids").copy()
        self.lengths = docs.numpy("lengths").astype(np.float64)
        self.live = np.ones(n, dtype=bool)
        slots = np.repeat(np.arange(n, dtype=np.int64), docs.numpy("sizes"))
        self._set_postings(docs.numpy("terms"), slots, docs.numpy("tfs"), n, True)
        self.count = self.built = self.live_rows = n
        self.total_tokens = int(self.lengths.sum())
        self.dead, self.added_slot, self.added = 0, {}, {}
        self._norm = None

    def _set_postings(
        self, terms: np.ndarray, slots: np.ndarray, tfs: np.ndarray, n: int, by_slot: bool
    ) -> None:
        """Store ``(term, slot, tf)`` triples (int64 ``(p,)`` each) as CSR by term, then slot.

        :param by_slot: the triples are in ascending slot order already (a cheaper sort).
        """
        order = np.argsort(terms, kind="stable") if by_slot else np.lexsort((slots, terms))
        self.post_slots = slots[order].astype(np.int32)
        wide = len(tfs) and int(tfs.max()) > np.iinfo(np.uint16).max
        self.post_tfs = tfs[order].astype(np.uint32 if wide else np.uint16)
        self.ptr = np.zeros(len(self.vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount(terms, minlength=len(self.vocab)), out=self.ptr[1:])
        self._scores = np.zeros(n, dtype=np.float64)

    def _apply(self, conn: apsw.Connection, changed: list[int]) -> None:
        """Re-read ``changed`` chunk ids: retire their slots, add slots for those present."""
        for cid in changed:
            slot = self.slot_of(cid)
            if slot >= 0 and self.live[slot]:
                self.live[slot] = False
                self.live_rows -= 1
                self.total_tokens -= int(self.lengths[slot])
                self.dead += 1
        listed = json.dumps(changed)
        rows = conn.execute(
            f"SELECT id, {BODY} FROM chunks WHERE id IN (SELECT rowid FROM {self.table} "
            "WHERE rowid IN (SELECT value FROM json_each(?))) ORDER BY id", (listed,))
        docs = tokenize_rows(conn, rows, self.vocab)
        start = 0
        for cid, length, size in zip(docs.ids, docs.lengths, docs.sizes, strict=True):
            end = start + size
            self._add_slot(cid, length, docs.terms[start:end], docs.tfs[start:end])
            start = end
        self._norm = None
        if max(self.dead, self.count - self.built) > max(
                REBUILD_MIN, REBUILD_FRACTION * self.built):
            self._rebuild()

    def _add_slot(
        self, cid: int, length: int, terms: Sequence[int], tfs: Sequence[int]
    ) -> None:
        slot = self.count
        if slot >= len(self.slot_ids):
            cap = max(16, int(slot * 1.5))
            self.slot_ids = np.resize(self.slot_ids, cap)
            self.lengths = np.resize(self.lengths, cap)
            self.live = np.resize(self.live, cap)
            self._scores = np.zeros(cap, dtype=np.float64)
        self.slot_ids[slot] = cid
        self.lengths[slot] = length
        self.live[slot] = True
        self.count += 1
        self.live_rows += 1
        self.total_tokens += length
        self.added_slot[cid] = slot
        for term, tf in zip(terms, tfs, strict=True):
            entry = self.added.get(term)
            if entry is None:
                entry = self.added[term] = (array("i"), array("I"))
            entry[0].append(slot)
            entry[1].append(tf)

    def _rebuild(self) -> None:
        """Rebuild the arrays from the live slots (ascending chunk ids again)."""
        nterms = len(self.ptr) - 1
        terms = [np.repeat(np.arange(nterms, dtype=np.int64), np.diff(self.ptr))]
        slots = [self.post_slots.astype(np.int64)]
        tfs = [self.post_tfs.astype(np.int64)]
        for term, (s, f) in self.added.items():
            terms.append(np.full(len(s), term, dtype=np.int64))
            slots.append(np.frombuffer(s, dtype=np.int32).astype(np.int64))
            tfs.append(np.frombuffer(f, dtype=np.uint32).astype(np.int64))
        t, s, f = np.concatenate(terms), np.concatenate(slots), np.concatenate(tfs)
        keep = self.live[s]
        t, s, f = t[keep], s[keep], f[keep]
        alive = np.flatnonzero(self.live[:self.count])
        alive = alive[np.argsort(self.slot_ids[alive], kind="stable")]
        renumber = np.full(self.count, -1, dtype=np.int64)
        renumber[alive] = np.arange(len(alive))
        self.slot_ids = self.slot_ids[alive]
        self.lengths = self.lengths[alive]
        n = len(alive)
        self.live = np.ones(n, dtype=bool)
        self._set_postings(t, renumber[s], f, n, False)
        self.count = self.built = self.live_rows = n
        self.dead, self.added_slot, self.added = 0, {}, {}
        self._norm = None

    def slot_of(self, chunk_id: int) -> int:
        """Return the newest slot of ``chunk_id``, or -1 when it was never indexed."""
        slot = self.added_slot.get(chunk_id)
        if slot is not None:
            return slot
        at = int(np.searchsorted(self.slot_ids[:self.built], chunk_id))
        if at < self.built and self.slot_ids[at] == chunk_id:
            return at
        return -1

    # -- ranking ---------------------------------------------------------------------

    def live_postings(self, term: int) -> tuple[np.ndarray, np.ndarray]:
        """Return the live ``(slots int64, tf float64)`` of ``term``, ascending by slot."""
        parts = self.raw_parts(term)
        slots, tfs = parts[0] if len(parts) == 1 else (
            np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))
        if self.dead:
            keep = self.live[slots]
            slots, tfs = slots[keep], tfs[keep]
        return slots.astype(np.int64), tfs.astype(np.float64)

    def raw_parts(self, term: int) -> list[tuple[np.ndarray, np.ndarray]]:
        """Return ``term``'s postings as ``(slots, tfs)`` parts, dead slots included: the
        built part, then the added one when there is one; each ascending by slot, and the
        added slots are above the built ones."""
        if term < len(self.ptr) - 1:
            start, end = self.ptr[term], self.ptr[term + 1]
            parts = [(self.post_slots[start:end], self.post_tfs[start:end])]
        else:
            parts = [(np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.uint16))]
        extra = self.added.get(term)
        if extra is not None:
            parts.append((np.frombuffer(extra[0], dtype=np.int32),
                          np.frombuffer(extra[1], dtype=np.uint32)))
        return parts

    def live_count(self, term: int) -> int:
        """Return how many live chunks hold ``term`` (FTS5's n of its IDF)."""
        parts = self.raw_parts(term)
        if not self.dead:
            return sum(len(p[0]) for p in parts)
        return sum(int(np.count_nonzero(self.live[p[0]])) for p in parts)

    def _tf_max(self, term: int) -> int:
        """Return ``term``'s largest count in any slot (dead ones included)."""
        return max((int(p[1].max()) for p in self.raw_parts(term) if len(p[1])), default=0)

    def ranked(
        self, tokens: Sequence[str], limit: int, allowed: np.ndarray | None = None,
        prune: bool = True,
    ) -> list[tuple[int, float]]:
        """Return the ``limit`` best chunks for an OR of one-token phrases, as FTS5 would.

        Call :meth:`sync` first (under the same read transaction as any follow-up read).
        Queries with two or more distinct terms holding at least
        :data:`.maxscore.MIN_POSTINGS` postings skip chunks that cannot reach the top
        ``limit`` (:mod:`.maxscore`: the same hits and scores).

        :param tokens: each phrase's token, as FTS5's tokenizer produced it (duplicates
            count twice, as two equal phrases do in FTS5).
        :param limit: number of hits, >= 1.
        :param allowed: bool mask over chunk ids (ids past its end are not allowed), or
            ``None`` for every chunk. Only postings of allowed chunks are scored; N, the
            average length and each IDF still count every row, as FTS5's ``bm25()`` does
            under a join, so the hits are FTS5's joined statement's, bit for bit.
        :param prune: allow the pruning (False: always the exhaustive sum).
        :returns: ``(chunk id, -bm25())`` pairs, highest score first, ties by ascending
            chunk id; only chunks matching at least one token.
        """
        with self.lock:
            n_rows = self.live_rows
            if not n_rows or not tokens:
                return []
            if self._norm is None:
                avgdl = float(self.total_tokens) / float(n_rows)
                self._norm = K1 * (1 - B + B * self.lengths[:self.count] / avgdl)
                self._norm_min = float(self._norm.min())
            passing = allowed_at(allowed, self.slot_ids[:self.count])
            terms = [t for t in map(self.vocab.get, tokens) if t is not None]
            if prune and len(set(terms)) > 1 and sum(map(self.live_count, set(terms))) >= \
                    maxscore.MIN_POSTINGS:
                rows, top = maxscore.pruned_top(
                    self, terms, n_rows, self._norm, self._norm_min,
                    {t: self._tf_max(t) for t in terms}, passing, limit, self._scores)
            else:
                rows, top = self.summed(terms, passing)
        return _best(self.slot_ids[rows], top, limit)

    def summed(self, terms: Sequence[int], passing: np.ndarray | None
               ) -> tuple[np.ndarray, np.ndarray]:
        """Score every chunk holding any of ``terms`` (the exhaustive ranking).

        Call under :attr:`lock` after :meth:`ranked` has set the length norms.

        :param terms: term ids in query order (duplicates count twice).
        :param passing: bool ``(slots,)`` allowed slots, or ``None`` for all.
        :returns: int64 slots holding a term and their float64 ``-bm25()``, unordered.
        """
        assert self._norm is not None
        scores = self._scores
        for term in terms:
            slots, tf = self.live_postings(term)
            idf = maxscore.idf(self.live_rows, len(slots))
            if passing is not None:
                keep = passing[slots]
                slots, tf = slots[keep], tf[keep]
            scores[slots] += maxscore.contributions(idf, tf, self._norm[slots])
        rows = np.flatnonzero(scores[:self.count])  # every contribution is > 0
        top = scores[rows]
        scores[rows] = 0.0
        return rows, top


def _best(ids: np.ndarray, scores: np.ndarray, limit: int) -> list[tuple[int, float]]:
    """Return the ``limit`` best ``(id, score)`` pairs, score descending, then id ascending."""
    if len(scores) > limit:
        kth = -np.partition(-scores, limit - 1)[limit - 1]
        keep = scores >= kth
        ids, scores = ids[keep], scores[keep]
    order = np.lexsort((ids, -scores))[:limit]
    return [(int(i), float(s)) for i, s in zip(ids[order], scores[order], strict=True)]
