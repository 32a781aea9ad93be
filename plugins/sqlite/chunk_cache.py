"""Recently read chunks kept in RAM, exact against the committed ``chunks`` table.

A recall with the ``conversation`` reranker reads ~200 candidate chunks per query, and a
conversation's turns are candidates again and again: decoding the rows (two JSON
columns and a :class:`~octomem.engine.types.Chunk` each) was the largest cost of a
recall on a one-conversation store (5.0 of 19 ms of the query thread's CPU, LoCoMo
conv-26 at load 11). This cache serves them from RAM.

It stays exact through the change log the filter index already follows
(:mod:`.changelog`, :mod:`.filter_index`): every read syncs the filter index first, in
the same read transaction, and the sync evicts the chunks whose rows changed (a
supersede sets ``valid_to``, a delete removes the row) or clears the cache when the
index reloads. A chunk read in an older snapshot is kept only if no sync moved the log
on meanwhile. Only a warmed store (the filter index loaded) uses it, and never inside a
transaction that has written rows (its changes could still roll back).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import apsw

from octomem.engine.types import Chunk

if TYPE_CHECKING:
    from .filter_index import FilterIndex

#: Chunks kept, least recently read dropped first: ~8 MiB with chunks of ~1 kB text, a
#: few hundred conversations' worth of turns (a LoCoMo conversation has 369-689).
CAPACITY = 8192


class ChunkCache:
    """Chunks by id, least recently read dropped beyond ``capacity``. Thread-safe."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._chunks: OrderedDict[int, Chunk] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._chunks)

    def changed(self, ids: Sequence[int] | None) -> None:
        """Forget the chunks ``ids`` (their rows changed), or every chunk (``None``)."""
        with self._lock:
            if ids is None:
                self._chunks.clear()
                return
            for chunk_id in ids:
                self._chunks.pop(int(chunk_id), None)

    def read(
        self, conn: apsw.Connection, fields: FilterIndex, ids: Sequence[int],
        load: Callable[[Sequence[int]], list[Chunk]],
    ) -> list[Chunk]:
        """Return the chunks ``ids`` in that order (unknown ids skipped): cached ones from
        RAM, the others through ``load`` (which reads them on ``conn``).

        :param fields: the storage's filter index (loaded); synced here first.
        """
        with conn:  # one snapshot for the sync and the read
            fields.sync(conn)
            seen = fields.seq
            with self._lock:
                found = {i: self._chunks[i] for i in ids if i in self._chunks}
                for chunk_id in found:
                    self._chunks.move_to_end(chunk_id)
            missing = [i for i in dict.fromkeys(ids) if i not in found]
            loaded = load(missing) if missing else []
        if loaded:
            with fields.lock:  # no sync between the check and the insert
                if fields.seq == seen:
                    with self._lock:
                        self._chunks.update((c.id, c) for c in loaded)
                        while len(self._chunks) > self.capacity:
                            self._chunks.popitem(last=False)
        found.update((c.id, c) for c in loaded)
        return [found[i] for i in ids if i in found]
