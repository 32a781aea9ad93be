"""The postings' snapshot beside the SQLite file (:mod:`octomem.plugins.sqlite.snapshots`).

Saved only when the copy is wholly built (no slots added or retired since its last
sort): the slots' chunk ids and lengths, the CSR arrays (``ptr``, ``post_slots``,
``post_tfs``) as ``.npy`` files, and the vocabulary as a JSON list in term id order,
without the terms no stored chunk holds (those of deleted chunks: a snapshot never keeps
a forgotten word, :mod:`octomem.plugins.sqlite.purge`).
After a restore and the change log followed, the copy's row and token totals must equal
FTS5's own (``fts5_totals``), as after any sync; else it is loaded from the tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import apsw
import numpy as np

from ..sqlite import snapshots
from .ranking import fts5_totals

if TYPE_CHECKING:
    from ..sqlite.snapshot_sync import SnapshotState


class PostingSnapshots:
    """The :class:`~octomem.plugins.sqlite.snapshot_sync.Snapshotted` side of
    :class:`~.postings.PostingIndex` (a mixin: it reads and sets the index's fields)."""

    table: str
    seq: int
    snapshot: SnapshotState
    vocab: dict[str, int]
    slot_ids: np.ndarray
    lengths: np.ndarray
    live: np.ndarray
    ptr: np.ndarray
    post_slots: np.ndarray
    post_tfs: np.ndarray
    count: int
    built: int
    live_rows: int
    total_tokens: int
    dead: int
    added: dict[int, Any]
    _scores: np.ndarray

    def _clear(self) -> None: ...

    def snapshot_name(self) -> str:
        """The FTS5 table's name."""
        return self.table

    def snapshot_about(self) -> dict[str, Any]:
        """The table (its tokenizer is fixed by the arm)."""
        return {"kind": "postings", "table": self.table, "version": 1}

    def snapshot_adopt(self, snap: snapshots.Snapshot) -> bool:
        """Take the arrays (memory-mapped copy-on-write) and the vocabulary."""
        arrays, terms = snap.arrays, snap.extra.get("vocab")
        n = len(arrays["slot_ids"]) if "slot_ids" in arrays else -1
        p = len(arrays["post_slots"]) if "post_slots" in arrays else -1
        if not isinstance(terms, list) or n < 0 or p < 0:
            return False
        tfs = str(arrays["post_tfs"].dtype) if "post_tfs" in arrays else ""
        shapes: dict[str, tuple[int | None, ...]] = {
            "slot_ids": (n,), "lengths": (n,), "ptr": (len(terms) + 1,), "post_slots": (p,),
            "post_tfs": (p,)}
        dtypes = {"slot_ids": "int64", "lengths": "float64", "ptr": "int64",
                  "post_slots": "int32", "post_tfs": tfs if tfs in ("uint16", "uint32") else "-"}
        if not snapshots.check(arrays, shapes, dtypes) or int(arrays["ptr"][-1]) != p:
            return False
        self._clear()
        self.vocab = dict(zip(terms, range(len(terms)), strict=True))  # ~2x a dict comprehension
        if not set(map(type, terms)) <= {str}:
            self._clear()
            return False
        if len(self.vocab) != len(terms):
            self._clear()
            return False
        self.slot_ids, self.lengths = np.array(arrays["slot_ids"]), np.array(arrays["lengths"])
        self.ptr, self.post_slots = arrays["ptr"], arrays["post_slots"]
        self.post_tfs = arrays["post_tfs"]
        self.live = np.ones(n, dtype=bool)
        self.count = self.built = self.live_rows = n
        self.total_tokens = int(self.lengths.sum())
        self._scores = np.zeros(n, dtype=np.float64)
        return True

    def snapshot_agrees(self, conn: apsw.Connection) -> bool:
        """True when FTS5 counts the rows and tokens the copy counts."""
        return fts5_totals(conn, self.table) == (self.live_rows, self.total_tokens)

    def snapshot_export(self) -> tuple[dict[str, np.ndarray], dict[str, Any]] | None:
        """Copies of the built arrays and the vocabulary; ``None`` while slots were added
        or retired since the last sort (saved after the next rebuild)."""
        if self.count != self.built or self.dead or self.added:
            return None
        n = self.count
        counts = np.diff(self.ptr)
        used = np.flatnonzero(counts)  # terms no stored chunk holds (forgotten) are left out
        terms = list(self.vocab)
        ptr = np.zeros(len(used) + 1, dtype=np.int64)
        np.cumsum(counts[used], out=ptr[1:])
        arrays = {"slot_ids": self.slot_ids[:n].copy(), "lengths": self.lengths[:n].copy(),
                  "ptr": ptr, "post_slots": self.post_slots.copy(),
                  "post_tfs": self.post_tfs.copy()}
        return arrays, {"vocab": [terms[t] for t in used.tolist()]}
