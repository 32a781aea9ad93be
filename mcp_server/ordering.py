"""Tool calls run in the order they arrived: an agent sees its own writes.

The SDK starts every request as its own task as soon as it is read, and a tool function
runs on a worker thread, so two requests sent back to back without waiting for the first
answer (``remember`` then ``forget`` of the same text) could finish in either order: the
``forget`` found nothing because the ``remember`` was still waiting for the embedding
model. :class:`CallOrder` hands each call a ticket when the SDK starts it (in arrival
order: the dispatcher starts one task per request, in the order the lines were read, and
the ticket is taken before the first ``await``) and lets it run only when

- a **write** (``remember``, ``forget``, ``ingest``): every call with an earlier ticket
  has finished;
- a **read** (``recall``, ``status``, a resource): every *write* with an earlier ticket
  has finished. Reads run side by side with other reads: recall only reads the store
  (and adds to its usage counters in a transaction of its own).

One :class:`CallOrder` per server: over stdio that is one client's connection; over HTTP
it orders every session's calls by arrival at the server.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

#: The tools that only read a store; every other tool is ordered as a write.
READ_TOOLS = frozenset({"recall", "status"})


class CallOrder:
    """Tickets in arrival order; writes exclusive, reads concurrent among themselves."""

    def __init__(self) -> None:
        self._next = 0
        self._open: dict[int, bool] = {}  # ticket -> is a write
        self._changed: anyio.Event | None = None

    def _may_run(self, ticket: int, write: bool) -> bool:
        return not any(other < ticket and (write or other_write)
                       for other, other_write in self._open.items())

    @asynccontextmanager
    async def turn(self, write: bool) -> AsyncIterator[None]:
        """Take the next ticket now (before any ``await``), wait for its turn, hold it
        while the body runs.

        :param write: the call changes a store (exclusive) or only reads it.
        """
        ticket, self._next = self._next, self._next + 1
        self._open[ticket] = write
        try:
            while not self._may_run(ticket, write):
                if self._changed is None:
                    self._changed = anyio.Event()
                await self._changed.wait()
            yield
        finally:
            del self._open[ticket]
            if self._changed is not None:
                self._changed.set()
                self._changed = None

    def pending(self) -> int:
        """Calls holding a ticket (running or waiting)."""
        return len(self._open)
