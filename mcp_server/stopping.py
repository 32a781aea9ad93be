"""Stopping a server while tool calls run: say what is running, let writes stop early.

When the server is asked to stop (``serve --http``: SIGTERM or Ctrl-C; stdio: the client
closes stdin) while a tool call runs, the process neither drops the call silently nor
lingers without a word until it is done:

- one line on stderr says what is still running and how to stop at once, e.g.
  ``octomem: stopping: waiting for 1 ingest (embedding 3,448 chunks left); SIGTERM or
  Ctrl-C again stops now: what is stored stays, `octomem reindex` embeds the rest``;
- every running write is asked to stop (:class:`~octomem.engine.stopping.StopRequest`):
  an ingest stops embedding before its next batch and stores no further transcript, so
  the wait is about one embedding batch; a ``remember`` finishes (it is one short
  transaction);
- the calls are answered (an ingest says what it left undone, ``stopped``), then the
  server stops (:mod:`.http`, :mod:`.stdio`);
- a second signal ends the process at once (:func:`.process.exit_now`). Every write is
  its own committed SQLite transaction, so an end at any point loses no committed
  write: documents stored are kept, and chunks left without a vector are found by their
  words until an ingest of the same files or ``octomem reindex`` embeds them.
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

from octomem.engine.stopping import StopRequest


class RunningCalls:
    """The tool calls this server is running, and the one stop request they all share."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self._lock = threading.Lock()
        self._calls: dict[int, tuple[str, StopRequest]] = {}
        self._ids = itertools.count()

    @contextmanager
    def call(self, tool: str, cancelled: threading.Event | None = None
             ) -> Iterator[StopRequest]:
        """Count ``tool``'s call as running while the block runs.

        :param cancelled: set when the call is cancelled (its write then stops too).
        :returns: (as the block's value) the stop request the call's write is to watch.
        """
        request = StopRequest(self.stop, cancelled or threading.Event())
        with self._lock:
            key = next(self._ids)
            self._calls[key] = (tool, request)
        try:
            yield request
        finally:
            with self._lock:
                del self._calls[key]

    def busy(self) -> bool:
        """True while any counted call runs."""
        with self._lock:
            return bool(self._calls)

    def describe(self) -> str:
        """Return the running calls in words, e.g. ``1 ingest (embedding 3,448 chunks
        left), 2 remember``; ``""`` when none runs."""
        with self._lock:
            calls = list(self._calls.values())
        counts = Counter(tool for tool, _ in calls)
        parts = []
        for tool, n in counts.items():
            left = sum(r.chunks_left for t, r in calls if t == tool and r.embedding)
            parts.append(f"{n} {tool}" + (f" (embedding {left:,} chunks left)" if left else ""))
        return ", ".join(parts)

    def request_stop(self, cause: str, requests: int = 0, again: bool = True) -> str | None:
        """Ask every running (and later) write to stop early; return the stderr line that
        says what the server waits for, or ``None`` when it waits for nothing.

        :param cause: what asked for the stop, e.g. ``stopping`` or ``stdin closed``.
        :param requests: requests still to be answered (stdio counts them: a call may
            wait to start behind another), 0 to name only the calls running.
        :param again: the stop came from a signal (a second one stops at once), not from
            stdin closing.
        """
        self.stop.set()
        running = self.describe()
        if requests:
            running = (f"{requests} request{'s' if requests > 1 else ''} to be answered"
                       + (f" ({running})" if running else ""))
        if not running:
            return None
        return (f"{cause}: waiting for {running}; SIGTERM or Ctrl-C{' again' if again else ''}"
                " stops now: what is stored stays, `octomem reindex` embeds the rest")
