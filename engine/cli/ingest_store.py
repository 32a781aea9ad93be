"""Storing one part of an ``octomem ingest`` (a folder's files, a transcript, a BEIR
corpus) with progress bars: what a deliberate ``forget`` keeps out is screened first,
the documents are stored, then their chunks embedded, and one summary line says what
happened (:func:`store`). Split from :mod:`.ingesting`, which reads the paths and
orders the parts."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from rich.console import Console

from ..errors import OctomemError, StoreReadOnlyError, StoreWriteError
from .folder_notes import keeping
from .screened_notes import say_screened

if TYPE_CHECKING:
    from ..pipeline import Pipeline
    from .ingesting import Tally


def store(console: Console, pipeline: Pipeline, docs: Iterable[Any], total: int, label: str,
          tally: Tally, whole: bool = False, quiet: bool = False,
          gone: tuple[str, str] | None = None, named: bool = False,
          readd: bool = False, files: bool = False) -> None:
    """Store ``docs`` (``whole``: in one transaction), then embed what was stored.

    What a deliberate ``forget`` keeps out is left out and named (with ``readd``: stored,
    its tombstone lifted in the same transaction; :mod:`~..memory.tombstones`).

    :param total: how many documents ``docs`` holds at most (for the progress bar).
    :param quiet: print no summary when ``docs`` turned out to hold nothing at all (each
        named file refused says why itself).
    :param named: always begin the summary with ``label`` (a transcript: its file), not
        only when the ingest has several parts.
    :param gone: ``(scope, ingest.on_missing)`` for a transcript: the stored turns it no
        longer holds are retired once ``docs`` are stored
        (:func:`~..memory.gone_turns.retire`) and counted in the summary.
    :param files: ``docs`` are text files: noted in ``tally`` for what moved here
        (:func:`~.folder_notes.say_moved`; transcripts keep their ids, the write path
        takes their path).
    """
    from contextlib import nullcontext

    from ..memory.gone_turns import gone_turns, retire
    from ..memory.tombstones import Screened, lift, screen, screening
    from . import render

    storage = pipeline.arms.storage
    out = Screened()
    if whole or readd:  # read whole: a turn stays out by its text; lifts known first
        out = screen(storage, docs, readd)
        kept: Iterable[Any] = out.kept
    else:
        kept = screening(storage, docs, out)
    found = gone_turns(storage, out.kept) if gone is not None and out.kept else []
    kept = keeping(kept, tally.files_read) if files else kept
    # the embedding lock before the first write (engine.embedding_lock: other ingests)
    with render.progress(console) as bar, pipeline.embedding():
        task = bar.add_task(f"indexing {label}", total=total)

        def stored(n: int) -> None:
            tally.stored += n
            bar.advance(task, n)

        with storage.transaction() if out.lift else nullcontext() as tx:
            lift(storage, tx, out.lift)  # --readd: in the transaction that stores them
            report = pipeline.add(tally.watch(kept), stored, embed=False,
                                  **({"per_transaction": total} if whole else {}))
        bar.update(task, completed=total)  # every file looked at, skipped ones included
        retired = None if not found or gone is None else \
            (len(found), len(retire(gone[0], pipeline, found, gone[1])))  # type: ignore[arg-type]
        forgotten = [] if readd else out.left_out
        if quiet and not (report.added or report.replaced or report.unchanged or forgotten):
            say_screened(tally, out, readd)
            return
        tally.parts_stored += 1
        embedded = reused = 0
        pending = pipeline.to_embed(report, lambda: bar.console.print(  # theirs, once
            "note: another ingest is storing or embedding in this scope: waiting until it "
            "is done"))
        if pending and pipeline.arms.semantic and not pipeline.semantic_error \
                and not tally.unwritten:  # a full disk: once is enough
            task2 = bar.add_task("embedding chunks", total=len(pending))
            tally.to_embed += len(pending)

            def done(n: int) -> None:
                tally.embedded += n
                bar.advance(task2, n)

            before, reused = tally.embedded, pipeline.vectors_reused
            try:
                pipeline.embed_pending(done, pending)
            except (StoreWriteError, StoreReadOnlyError) as exc:  # the disk, not the model:
                tally.unwritten = str(exc)  # the ingest fails (its end says so: fail)
            except OctomemError as exc:
                report.semantic_error = str(exc)
            embedded = tally.embedded - before  # the batches that committed, also after an error
            reused = pipeline.vectors_reused - reused
        if embedded:
            warm_reranker(pipeline, bar)
    tally.files_added += report.added if files else []
    tally.expected -= len(forgotten)
    render.ingest_report(console, report, embedded, pipeline.semantic_error,
                         label if tally.parts > 1 or named else None, len(forgotten),
                         len(report.resumed) if embedded else 0, retired, reused)
    say_screened(tally, out, readd, console)


def warm_reranker(pipeline: Pipeline, bar: Any) -> None:
    """Let the reranker build what it builds once per machine (its optional
    ``warm(progress)``: the ``conversation`` reranker's word table, ~30 s of CPU), with a
    progress bar shown only while something is built."""
    warm = getattr(pipeline.arms.reranker, "warm", None)
    if not callable(warm):
        return
    task: list[Any] = []

    def building(done: int, total: int) -> None:
        if not task:
            task.append(bar.add_task("word vectors for the reranker (once per machine)",
                                     total=total))
        bar.update(task[0], completed=done)

    warm(progress=building)
