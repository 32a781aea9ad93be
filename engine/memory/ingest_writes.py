"""Storing what an ingest read into one scope (:meth:`.facade.Memory.ingest`): each group
of documents (a transcript's turns: one transaction) screened against the forget log
(:mod:`.tombstones`), stored and embedded, and the stored turns a transcript no longer
holds retired (:mod:`.gone_turns`). Reading the groups is :func:`.ingest.ingest_groups`;
what a folder no longer holds and what moved are reconciled after (:mod:`.folders`,
:mod:`.moved`)."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext

from ..pipeline import Pipeline
from ..stopping import StopRequest
from ..turns import TURN_KIND
from ..types import Document
from .folders import IngestReport
from .gone_turns import gone_turns, retire
from .ingest import merge_reports
from .scopes import ScopeName
from .tombstones import lift, note_screened, screen


def store_groups(target: ScopeName, pipeline: Pipeline, groups: Sequence[list[Document]],
                 report: IngestReport, readd: bool, on_missing: str,
                 stop: StopRequest | None = None
                 ) -> tuple[list[Document], list[str]] | None:
    """Store ``groups`` in ``target``'s ``pipeline``, one after another, into ``report``.

    :param readd: store what a deliberate ``forget`` keeps out, its tombstone lifted in
        the storing transaction.
    :param on_missing: ``ingest.on_missing``: what becomes of a transcript's stored turns
        it no longer holds (``forget`` or ``keep``).
    :param stop: once requested, no further group is stored (``report.not_stored``
        counts their documents) and embedding stops before its next batch.
    :returns: the text files' documents read and the ids of those added (for
        :func:`.moved.forget_moved`), or ``None`` when no group of text files was stored.
    :raises OctomemError: a group cannot be stored (its transaction rolls back).
    """
    storage = pipeline.arms.storage
    files: tuple[list[Document], list[str]] | None = None  # read and added
    for n, group in enumerate(groups):  # a transcript's turns: one transaction
        if stop is not None and stop.requested:
            report.not_stored = sum(len(g) for g in groups[n:])
            return files
        whole = len(group) if group[0].kind == TURN_KIND else None
        screened = screen(storage, group, readd)  # what forget keeps out: .tombstones
        gone = gone_turns(storage, screened.kept) if whole and screened.kept else []
        note_screened(report, screened, readd)
        with storage.transaction() if screened.lift else nullcontext() as tx:
            lift(storage, tx, screened.lift)  # --readd: in the storing transaction
            added = pipeline.add(screened.kept, per_transaction=whole,
                                 embed=not screened.lift, stop=stop)
        if screened.lift:  # embedded outside the write transaction
            added.embedded = pipeline.embed_pending(None, pipeline.to_embed(added), stop)
        merge_reports(report, added)
        if not whole:
            files = (screened.kept, added.added)
        report.missing += gone  # turns it no longer holds: retired
        report.forgotten += retire(target, pipeline, gone, on_missing)
    return files
