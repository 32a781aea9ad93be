"""Asking a long write, from another thread, to stop at its next embedding batch.

An ingest stores its documents in committed transactions first and embeds their chunks
afterwards, batch by batch, each batch one committed transaction
(:meth:`~.pipeline.Pipeline.embed_pending`). A server that is being stopped (SIGTERM,
Ctrl-C, a stdio client closing stdin) need not wait for the whole embedding: it sets
the :class:`StopRequest` the running write was given, and the write stops before its
next batch. What is stored stays consistent: every stored chunk is found by its words,
and the chunks left without a vector are embedded by the next ingest of the same files
(:meth:`~.pipeline.Pipeline.to_embed`) or by ``octomem reindex``.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass
class StopRequest:
    """One write's view of a stop: whether one was asked for, and how far the write is.

    :param event: set (by any thread) to ask the write to stop; several writes may share
        one event (a server stopping stops them all).
    :param cancelled: set when this write's own call was cancelled (an MCP client's
        ``notifications/cancelled``): it stops as for ``event``, the others go on.
    :param chunks_left: chunks the write still has to embed (0 before its embedding
        starts and once it ends), for saying what a stop leaves undone.
    :param embedding: True while the write embeds (between its first and last batch).
    """

    event: threading.Event = field(default_factory=threading.Event)
    cancelled: threading.Event = field(default_factory=threading.Event)
    chunks_left: int = 0
    embedding: bool = False

    @property
    def requested(self) -> bool:
        """True once a stop was asked for, or the write's call cancelled."""
        return self.event.is_set() or self.cancelled.is_set()

    def request(self) -> None:
        """Ask the write to stop before its next embedding batch."""
        self.event.set()
