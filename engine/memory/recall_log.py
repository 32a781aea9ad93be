"""Counting recalls off the query's path: ``recalls`` and ``last_recalled_at``.

A recall answer adds one to ``recalls`` of each statement it returned (session start
shows the most recalled ones). The update is a write, and a write waits for the scope's
write lock; so the answer is returned first and the counts are written by one worker
thread, each batch in one short transaction per scope. Reads that show the counts
(:meth:`RecallLog.flush` first) see every recall answered before them.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..arms import VersionedStorage
from ..errors import OctomemError, StoreReadOnlyError

log = logging.getLogger(__name__)

#: ``storage_of(scope)`` returns the open storage of a scope, or ``None``.
StorageOf = Callable[[str], Any]


class RecallLog:
    """Writes recall counts on a worker thread, in order, one transaction per batch.

    :param storage_of: finds a scope's storage when a batch is written.
    """

    def __init__(self, storage_of: StorageOf) -> None:
        self._storage_of = storage_of
        self._queue: queue.Queue[tuple[str, tuple[str, ...], float] | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def record(self, scope: str, document_ids: Sequence[str], at: float | None = None) -> None:
        """Queue one recall of ``document_ids`` in ``scope`` (nothing for an empty list)."""
        if not document_ids:
            return
        self._queue.put((scope, tuple(document_ids), time.time() if at is None else at))
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="octomem-recalls",
                                                daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                self._write(*item)
            except StoreReadOnlyError as exc:  # a read-only store still answers: counts wait
                log.debug("recall counts not written: %s", exc)
            except OctomemError as exc:  # e.g. locked past the busy timeout: one line
                log.warning("recall counts not written: %s", exc)
            except Exception:  # a count is not worth a crash; the answer was given
                storage = self._storage_of(item[0]) if item is not None else None
                check = getattr(storage, "damage", None)
                why = check() if callable(check) else None
                if why is None:
                    log.exception("recall counts not written")
                else:  # a damaged store: one line naming it, not a traceback
                    log.warning("recall counts not written: %s", why)
            finally:
                self._queue.task_done()

    def _write(self, scope: str, ids: tuple[str, ...], at: float) -> None:
        storage = self._storage_of(scope)
        if storage is None or not isinstance(storage, VersionedStorage):
            return
        with storage.transaction() as tx:
            storage.record_recalls(tx, ids, at)

    def flush(self) -> None:
        """Wait until every queued count is written."""
        self._queue.join()

    def close(self) -> None:
        """Write what is queued and stop the worker."""
        with self._lock:
            thread = self._thread
            self._thread = None
        if thread is not None and thread.is_alive():
            self._queue.put(None)
            thread.join()
