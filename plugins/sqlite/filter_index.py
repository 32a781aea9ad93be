"""An in-RAM copy of the filterable fields of ``chunks``: each query's filters as one bool
mask over chunk ids, exact against :meth:`Filters.matches
<octomem.engine.types.Filters.matches>`.

The SQL filters (:mod:`.filters`) evaluate ``json_extract``/``json_each`` on every
``chunks`` row a search considers; with a metadata filter keeping 10 % of 100k chunks
the ``sqlite-vec`` scan spent ~100 ms listing the passing ids and the ``fts5`` arm fell
back to FTS5 joined to ``chunks`` (70-115 ms, issue 15). Here every field is a numpy
column indexed by chunk id (``AUTOINCREMENT`` rowids: the id space is as dense as the
table was), and a mask costs a few vector compares (~0.05-0.15 ms at 100k):

- kind: an int32 code per chunk;
- tags: an int32 code per chunk naming its *set* of tags (a chunk inherits its
  document's, so distinct sets are few), and per tag tuple asked for, which sets hold
  every tag (cached, extended as new sets appear);
- metadata: per key, an int32 code per chunk of ``str(value)`` (-1: key absent), the
  rendering :meth:`Filters.matches` compares (an absent key renders as ``'None'``);
- times and validity: float64 ``created_at``, ``valid_from``, ``valid_to`` (+inf while
  current).

The copy follows ``chunks`` through the change log (:mod:`.changelog`): the storage
logs every chunk row it inserts (:func:`.schema.log_inserted`) and triggers
(:data:`.schema.CHUNK_TRIGGERS`) every updated and deleted one, in the writing
transaction, so any octomem writer (another process included) keeps it exact. The in-RAM
arms load it with their own copies (``warm()``) and sync it in the read transaction of
each search; a process that never warmed (a one-shot CLI call)
keeps the SQL filters.

Memory per chunk id: 1 + 4 + 3 x 8 + 4 bytes, plus 4 per metadata key (~3.7 MiB per 100k
chunks with one key). Loading reads the numbers as rows and the strings grouped (one
JSON parse per distinct kind, tag set and metadata object): ~1 s per 100k chunks on 2
loaded cores.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

import apsw
import numpy as np

from octomem.engine.types import Filters

from . import snapshot_sync
from .filter_snapshot import FilterSnapshots
from .schema import CHUNKS_LOG

#: The name under which the storage logs changed ``chunks`` rows.
LOG_NAME = CHUNKS_LOG
_COLUMNS = "id, kind, tags, created_at, metadata, valid_from, valid_to"


class FilterIndex(FilterSnapshots):
    """The filterable fields of every chunk as numpy columns indexed by chunk id
    (starting from its snapshot beside the file when one matches: :mod:`.filter_snapshot`).

    Thread-safe: :meth:`sync` and :meth:`mask` hold one lock.
    """

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.seq = -1  # -1: never loaded
        #: called with the ids of changed chunk rows, or ``None`` on a reload (under
        #: :attr:`lock`; e.g. :meth:`.chunk_cache.ChunkCache.changed`)
        self.listeners: list[Callable[[list[int] | None], None]] = []
        #: where its snapshots live (``db`` set by the storage; ``None``: none are used)
        self.snapshot = snapshot_sync.SnapshotState()
        self._clear()

    def _clear(self) -> None:
        self.size = 0  # ids < size are covered
        self.present = np.zeros(0, dtype=bool)
        self.kind = np.zeros(0, dtype=np.int32)
        self.created = np.zeros(0, dtype=np.float64)
        self.valid_from = np.zeros(0, dtype=np.float64)
        self.valid_to = np.zeros(0, dtype=np.float64)
        self.tagset = np.zeros(0, dtype=np.int32)
        self.kind_codes: dict[str, int] = {}
        self.tagsets: list[frozenset[str]] = [frozenset()]
        self.tagset_codes: dict[frozenset[str], int] = {frozenset(): 0}
        self.meta: dict[str, np.ndarray] = {}
        self.meta_values: dict[str, dict[str, int]] = {}
        self._tag_luts: dict[tuple[str, ...], np.ndarray] = {}
        self.noncurrent = 0

    @property
    def loaded(self) -> bool:
        """True once the first :meth:`sync` has loaded the copy."""
        return self.seq >= 0

    # -- keeping in step -------------------------------------------------------------

    def sync(self, conn: apsw.Connection, restore_only: bool = False) -> bool:
        """Bring the copy up to date with the committed ``chunks`` (one read transaction;
        :func:`.snapshot_sync.sync`: a copy never loaded starts from a matching snapshot).

        :param restore_only: never load the table whole (stay unloaded without a snapshot).
        :returns: True when the copy is loaded afterwards.
        """
        with self.lock, conn:
            return snapshot_sync.sync(self, conn, LOG_NAME, lambda: self._load_all(conn),
                                      lambda changed: self._apply(conn, changed), restore_only)

    def _load_all(self, conn: apsw.Connection) -> None:
        """Read every chunk: numbers as rows, strings grouped (one Python object per
        distinct kind, tag set and metadata object, not per chunk)."""
        self._clear()
        for listener in self.listeners:
            listener(None)
        rows = conn.execute(
            "SELECT id, created_at, valid_from, coalesce(valid_to, 9e999) FROM chunks").fetchall()
        if not rows:
            return
        table = np.asarray(rows, dtype=np.float64)
        ids = table[:, 0].astype(np.int64)
        self._reserve(int(ids.max()) + 1)
        self.present[ids] = True
        self.created[ids], self.valid_from[ids], self.valid_to[ids] = table[:, 1:].T
        self.noncurrent = int(np.count_nonzero(np.isfinite(table[:, 3])))
        for kind, listed in conn.execute(
                "SELECT kind, json_group_array(id) FROM chunks GROUP BY kind"):
            self.kind[json.loads(listed)] = self._code(kind)
        for tags, listed in conn.execute(
                "SELECT tags, json_group_array(id) FROM chunks WHERE tags != '[]' GROUP BY tags"):
            self.tagset[json.loads(listed)] = self._tagset(tags)
        for metadata, listed in conn.execute(
                "SELECT metadata, json_group_array(id) FROM chunks WHERE metadata != '{}' "
                "GROUP BY metadata"):
            self._set_metadata(metadata, np.asarray(json.loads(listed), dtype=np.int64))

    def _apply(self, conn: apsw.Connection, changed: list[int]) -> None:
        for listener in self.listeners:
            listener(changed)
        ids = np.asarray(changed, dtype=np.int64)
        self._reserve(int(ids.max()) + 1)
        self._forget(ids)
        self._set_rows(conn.execute(
            f"SELECT {_COLUMNS} FROM chunks WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(changed),)))

    def _reserve(self, size: int) -> None:
        """Cover ids ``< size`` (growing by 1.5x at least); new ids start absent."""
        if size <= self.size:
            return
        cap = len(self.present)
        if size > cap:
            cap = max(size, int(cap * 1.5) + 1024)
            for name in ("present", "kind", "created", "valid_from", "valid_to", "tagset"):
                setattr(self, name, _grown(getattr(self, name), cap, 0))
            for key, codes in self.meta.items():
                self.meta[key] = _grown(codes, cap, -1)
        self.size = size

    def _forget(self, ids: np.ndarray) -> None:
        """Mark ``ids`` absent (their rows are read again if they still exist)."""
        gone = ids[self.present[ids]]
        self.noncurrent -= int(np.count_nonzero(np.isfinite(self.valid_to[gone])))
        self.present[gone] = False
        for codes in self.meta.values():
            codes[gone] = -1

    def _set_rows(self, rows: Any) -> None:
        """Set the fields of ``(id, kind, tags, created_at, metadata, valid_from,
        valid_to)`` rows."""
        for cid, kind, tags, created_at, metadata, valid_from, valid_to in rows:
            self.present[cid] = True
            self.kind[cid] = self._code(kind)
            self.tagset[cid] = 0 if tags == "[]" else self._tagset(tags)
            self.created[cid] = created_at
            self.valid_from[cid] = valid_from
            self.valid_to[cid] = np.inf if valid_to is None else valid_to
            self.noncurrent += valid_to is not None
            if metadata != "{}":
                self._set_metadata(metadata, np.asarray([cid], dtype=np.int64))

    def _set_metadata(self, raw: str, ids: np.ndarray) -> None:
        """Set each key's value code for the chunks ``ids`` whose metadata JSON is ``raw``."""
        for key, value in json.loads(raw).items():
            values = self.meta_values.setdefault(key, {})
            code = values.setdefault(str(value), len(values))
            column = self.meta.get(key)
            if column is None:
                column = self.meta[key] = np.full(len(self.present), -1, dtype=np.int32)
            column[ids] = code

    def _code(self, kind: str) -> int:
        code = self.kind_codes.get(kind)
        if code is None:
            code = self.kind_codes[kind] = len(self.kind_codes)
        return code

    def _tagset(self, tags_json: str) -> int:
        tags = frozenset(json.loads(tags_json))
        code = self.tagset_codes.get(tags)
        if code is None:
            code = self.tagset_codes[tags] = len(self.tagsets)
            self.tagsets.append(tags)
        return code

    # -- masks -----------------------------------------------------------------------

    def mask(self, filters: Filters) -> np.ndarray | None:
        """Return the chunk ids passing ``filters`` as a bool mask over ids ``< size``.

        :returns: bool ``(size,)``, True where a stored chunk passes; ``None`` when every
            stored chunk passes (no restriction and nothing superseded).
        """
        with self.lock:
            n = self.size
            if filters.is_empty() and (filters.include_superseded or not self.noncurrent):
                return None
            out = self.present[:n].copy()
            if filters.kinds:
                codes = [self.kind_codes[k] for k in set(filters.kinds) if k in self.kind_codes]
                out &= _one_of(self.kind[:n], np.asarray(codes, dtype=np.int32))
            if filters.tags:
                out &= _one_of(self.tagset[:n], np.flatnonzero(self._tag_lut(filters.tags)))
            _bounds(out, self.created[:n], filters.created_after, filters.created_before)
            for key, value in filters.metadata.items():
                self._metadata(out, str(key), str(value))
            _bounds(out, self.valid_from[:n], filters.valid_after, filters.valid_before)
            vto = self.valid_to[:n]
            if filters.as_of is not None:
                out &= self.valid_from[:n] <= filters.as_of
                out &= vto > filters.as_of
            elif not filters.include_superseded and self.noncurrent:
                out &= vto == np.inf  # (nothing superseded: every stored row passes)
            return out

    def _metadata(self, out: np.ndarray, key: str, value: str) -> None:
        """AND into ``out`` the chunks whose ``str(metadata.get(key)) == value``."""
        column = self.meta.get(key)
        code = self.meta_values.get(key, {}).get(value, -2)
        if column is None:
            if value != "None":  # an absent key renders as 'None'
                out[:] = False
            return
        codes = column[:self.size]
        keep = codes == code
        if value == "None":
            keep |= codes == -1
        out &= keep

    def _tag_lut(self, tags: tuple[str, ...]) -> np.ndarray:
        """Bool per tag set code: True where the set holds every tag of ``tags``."""
        key = tuple(sorted(set(tags)))
        lut = self._tag_luts.get(key)
        start = 0 if lut is None else len(lut)
        if start < len(self.tagsets):
            wanted = set(key)
            more = np.fromiter((wanted <= s for s in self.tagsets[start:]), dtype=bool)
            lut = more if lut is None else np.concatenate([lut, more])
            if len(self._tag_luts) > 1024:
                self._tag_luts.clear()
            self._tag_luts[key] = lut
        assert lut is not None
        return lut


def _bounds(out: np.ndarray, values: np.ndarray, low: float | None, high: float | None) -> None:
    """AND into ``out`` ``low <= values < high`` (``None`` leaves that side open)."""
    if low is not None:
        out &= values >= low
    if high is not None:
        out &= values < high


def _one_of(codes: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Return ``codes`` in ``wanted`` as bool: compares for a few wanted codes (~10x
    cheaper than a gather), a lookup table for many."""
    if len(wanted) <= 4:
        out = np.zeros(len(codes), dtype=bool)
        for code in wanted:
            out |= codes == code
        return out
    lut = np.zeros(int(max(codes.max(initial=0), wanted.max())) + 1, dtype=bool)
    lut[wanted] = True
    return lut[codes]


def allowed_at(mask: np.ndarray | None, ids: np.ndarray) -> np.ndarray | None:
    """Return ``mask[ids]`` (bool, ``ids``' shape), False for ids past the mask's end;
    ``None`` when ``mask`` is ``None`` (everything allowed).

    :param ids: int64 chunk ids, e.g. the rows of an in-RAM vector matrix.
    """
    if mask is None:
        return None
    if not len(ids) or int(ids.max()) < len(mask):
        return mask[ids]
    out = np.zeros(len(ids), dtype=bool)
    inside = ids < len(mask)
    out[inside] = mask[ids[inside]]
    return out


def _grown(arr: np.ndarray, cap: int, fill: Any) -> np.ndarray:
    out = np.full(cap, fill, dtype=arr.dtype)
    out[:len(arr)] = arr
    return out
