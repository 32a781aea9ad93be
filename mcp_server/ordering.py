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

One :class:`CallOrder` per MCP session (:class:`SessionOrders`): over stdio that is the one
client's connection; over streamable HTTP each client's session has its own, so one
agent's long ``ingest`` never holds back another agent's ``recall`` (trial 12: 31.6 s
with one order for the whole server). An HTTP request of protocol 2026-07-28 belongs to
no session (each is a self-contained POST): it is ordered after nothing, and a client
sees its write by awaiting its answer first. Writes of different sessions take turns per
transaction, not per call: short writes (``remember``, ``forget``) hold the memory's
write lock (:attr:`.loader.MemoryLoader.write_lock`), ingests their own
(:attr:`.loader.MemoryLoader.ingest_lock`), and SQLite runs their transactions one at a
time, so another session's ``remember`` waits for one batch of an ingest, not all of it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER

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


#: The order key of the calls that come without HTTP headers: stdio's one connection (and
#: an in-process client), one session.
ONE_CONNECTION = "connection"


def session_of(context: Any) -> str | None:
    """Return the key a request is ordered under (:class:`SessionOrders`).

    - over streamable HTTP with a session (protocol versions with the ``initialize``
      handshake, up to 2025-11-25): the session id the SDK's session manager routed the
      request by (header ``mcp-session-id``: a request reaches a session's transport only
      with that session's id);
    - over streamable HTTP without a session (protocol 2026-07-28, where every request is
      a self-contained POST, or a stateless server): ``None``, ordered after nothing;
    - without HTTP headers (stdio, whose connection is one session; an in-process client;
      a call made outside a request): :data:`ONE_CONNECTION`.

    :param context: the SDK's per-request ``Context`` handed to ``call_tool`` /
        ``read_resource``, or ``None``.
    """
    try:
        headers: Mapping[str, str] | None = context.headers if context is not None else None
    except ValueError:  # the SDK's "Context is not available outside of a request"
        headers = None
    if headers is None:
        return ONE_CONNECTION
    return headers.get(MCP_SESSION_ID_HEADER)


class SessionOrders:
    """One :class:`CallOrder` per MCP session, made on its first call and dropped when it
    holds no ticket (so a server that saw many sessions keeps none of theirs)."""

    def __init__(self) -> None:
        self._orders: dict[str, CallOrder] = {}

    @asynccontextmanager
    async def turn(self, session: str | None, write: bool) -> AsyncIterator[None]:
        """Wait for the call's turn among the calls of ``session`` only (:meth:`CallOrder.turn`).

        :param session: the key from :func:`session_of`; ``None`` (a request that belongs
            to no session) runs at once.
        :param write: the call changes a store (exclusive) or only reads it.
        """
        if session is None:
            yield
            return
        order = self._orders.setdefault(session, CallOrder())
        try:
            async with order.turn(write):
                yield
        finally:
            if order.pending() == 0 and self._orders.get(session) is order:
                del self._orders[session]

    def pending(self) -> int:
        """Calls holding a ticket, over every session."""
        return sum(order.pending() for order in self._orders.values())

    def sessions(self) -> int:
        """Sessions with a call running or waiting."""
        return len(self._orders)
