"""The filter index's snapshot beside the SQLite file (:mod:`.snapshots`).

Saved: the per-id columns (``present``, ``kind``, ``created``, ``valid_from``,
``valid_to``, ``tagset`` and one code column per metadata key) as ``.npy`` files, and the
code books (kinds, tag sets, metadata values) as JSON. After a restore and the change log
followed, the copy is checked against ``chunks``: the number of chunks present, and a
sample of :data:`SAMPLE` rows' kind, time and validity.
"""

from __future__ import annotations

import json
import random
from typing import TYPE_CHECKING, Any

import apsw
import numpy as np

from . import snapshots

if TYPE_CHECKING:
    from .snapshot_sync import SnapshotState

#: Chunks compared with the table after a snapshot was restored and brought up to date.
SAMPLE = 32
#: The per-id columns and their types.
COLUMNS = {"present": "bool", "kind": "int32", "created": "float64", "valid_from": "float64",
           "valid_to": "float64", "tagset": "int32"}


class FilterSnapshots:
    """The :class:`~.snapshot_sync.Snapshotted` side of :class:`~.filter_index.FilterIndex`
    (a mixin: it reads and sets the index's fields)."""

    seq: int
    size: int
    snapshot: SnapshotState
    kind_codes: dict[str, int]
    tagsets: list[frozenset[str]]
    tagset_codes: dict[frozenset[str], int]
    meta: dict[str, np.ndarray]
    present: np.ndarray
    kind: np.ndarray
    created: np.ndarray
    valid_to: np.ndarray
    meta_values: dict[str, dict[str, int]]
    noncurrent: int
    listeners: list[Any]

    def _clear(self) -> None: ...

    def snapshot_name(self) -> str:
        """``chunks``: one filter index per store."""
        return "chunks"

    def snapshot_about(self) -> dict[str, Any]:
        """What the columns hold (a new layout gets a new ``version``)."""
        return {"kind": "filters", "version": 1}

    def snapshot_adopt(self, snap: snapshots.Snapshot) -> bool:
        """Take the columns (memory-mapped copy-on-write) and the code books."""
        arrays, extra = snap.arrays, snap.extra
        try:
            size = int(extra["size"])
            keys = [str(k) for k in extra["meta_keys"]]
            kinds = {str(k): int(v) for k, v in extra["kind_codes"].items()}
            tagsets = [frozenset(str(t) for t in tags) for tags in extra["tagsets"]]
            values = {str(k): {str(v): int(c) for v, c in codes.items()}
                      for k, codes in extra["meta_values"].items()}
            noncurrent = int(extra["noncurrent"])
        except (KeyError, TypeError, ValueError, AttributeError):
            return False
        shapes: dict[str, tuple[int | None, ...]] = {name: (size,) for name in COLUMNS}
        dtypes = dict(COLUMNS)
        for i, _ in enumerate(keys):
            shapes[f"meta{i}"], dtypes[f"meta{i}"] = (size,), "int32"
        if not snapshots.check(arrays, shapes, dtypes) or set(values) != set(keys):
            return False
        self._clear()
        for listener in self.listeners:
            listener(None)
        for name in COLUMNS:
            setattr(self, name, arrays[name])
        self.meta = {key: arrays[f"meta{i}"] for i, key in enumerate(keys)}
        self.meta_values, self.kind_codes = values, kinds
        self.tagsets = tagsets if tagsets and not tagsets[0] else [frozenset(), *tagsets]
        self.tagset_codes = {tags: i for i, tags in enumerate(self.tagsets)}
        self.size, self.noncurrent = size, noncurrent
        return True

    def snapshot_agrees(self, conn: apsw.Connection) -> bool:
        """True when as many chunks are present as ``chunks`` holds, and a sample of them
        has the table's kind, creation time and validity."""
        present = self.present
        count = int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
        if count != int(np.count_nonzero(present[:self.size])):
            return False
        ids = np.flatnonzero(present[:self.size])
        if not len(ids):
            return True
        # the standard library's sampler: numpy.random is a 50-70 ms import of its own
        pick = ids[sorted(random.sample(range(len(ids)), min(SAMPLE, len(ids))))]
        names = {code: kind for kind, code in self.kind_codes.items()}
        kind, created, valid_to = self.kind, self.created, self.valid_to
        rows = conn.execute(
            "SELECT id, kind, created_at, coalesce(valid_to, 9e999) FROM chunks WHERE id IN "
            "(SELECT value FROM json_each(?))", (json.dumps(pick.tolist()),)).fetchall()
        return len(rows) == len(pick) and all(
            names.get(int(kind[cid])) == k and created[cid] == c and valid_to[cid] == v
            for cid, k, c, v in rows)

    def snapshot_export(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Copies of the columns up to ``size``, and the code books without the tag sets
        and metadata values no stored chunk has (those of deleted chunks: a snapshot never
        keeps a forgotten statement's tags or metadata, :mod:`.purge`), codes renumbered."""
        n = self.size
        present = self.present[:n]
        arrays = {name: np.array(getattr(self, name)[:n]) for name in COLUMNS}
        tags = arrays["tagset"]
        tags[~present] = 0
        used = np.union1d(np.zeros(1, dtype=np.int32), tags[present])  # the empty set first
        arrays["tagset"] = _renumbered(tags, used, len(self.tagsets))
        keys: list[str] = []
        values: dict[str, dict[str, int]] = {}
        for key, column in self.meta.items():
            codes = np.array(column[:n])
            codes[~present] = -1
            used_values = np.unique(codes[codes >= 0])
            if not len(used_values):
                continue
            arrays[f"meta{len(keys)}"] = _renumbered(codes, used_values,
                                                     len(self.meta_values[key]))
            named = {code: value for value, code in self.meta_values[key].items()}
            values[key] = {named[int(c)]: i for i, c in enumerate(used_values.tolist())}
            keys.append(key)
        extra = {"size": n, "meta_keys": keys, "kind_codes": self.kind_codes,
                 "tagsets": [sorted(self.tagsets[i]) for i in used.tolist()],
                 "meta_values": values, "noncurrent": self.noncurrent}
        return arrays, extra


def _renumbered(codes: np.ndarray, used: np.ndarray, book: int) -> np.ndarray:
    """Return int32 ``codes`` with each code in the ascending ``used`` replaced by its
    position there (-1 stays -1: no value). ``book``: the size of the old code book."""
    lut = np.full(book + 1, -1, dtype=np.int32)  # the extra last entry: lut[-1] = -1
    lut[used] = np.arange(len(used), dtype=np.int32)
    return lut[codes]
