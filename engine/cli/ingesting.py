"""``octomem ingest`` run for a person: progress, what was stored, and what was not.

- A path the user named on the command line that cannot be ingested (missing, empty,
  unreadable: ``PATH: cannot be read (Permission denied)``, a folder that cannot be
  listed too; not UTF-8, too large, a ``.jsonl`` that is no transcript, a transcript
  without turns or with a malformed line) is an error naming the path (and line) and
  why, ``error: PATH: why``, exit status 1, after the other paths are stored; nothing of
  it is stored. The
  summary line (``added N, ...``) is printed when something was stored, or when files were
  read but nothing of them could be (transcripts without turns, files skipped for an
  error); not when every named path failed before anything was read.
- A file inside a named folder that cannot be ingested is skipped with a note on stderr
  (``skipped: FILE:LINE: why``), every one of them, and the rest of the folder is
  stored; when a file was skipped for an error (not UTF-8, too large, unreadable, a
  malformed transcript), the command then ends with one error line and status 1. A
  folder inside that cannot be listed is skipped alike (``skipped: DIR/: cannot be read
  (Permission denied)``). An empty file is only noted.
- Files in a named folder that are not read (another suffix, a ``.jsonl`` file that is
  no transcript, a FIFO or device) are listed with why (``left alone: N files in the
  folders, not read:``; :func:`.folder_notes.say_left_alone`).
- A named folder holding no text file or transcript is an error (``no text file (.md,
  .txt, .rst) or transcript (.jsonl) in DIR``), status 1, after the other paths are
  stored; so is one whose transcripts hold no turn (each noted ``note: FILE: no turns in
  it``).
- Files a named folder no longer holds are reported (``gone: FILE: ...``) and, by
  ``ingest.on_missing``, forgotten, unless a path named on the command line failed: then
  nothing is forgotten (each gone file is reported as kept). A file inside the folder
  skipped for an error does not stop it: that file keeps its document (it is still
  there), and files really gone are forgotten. Such a forget
  is no tombstone: the file is stored again when it comes back.
- A scope without a store yet gets one only when something is to be stored: an ingest
  whose every path failed, or whose files all turned out unreadable, creates none (the
  named text files are read up to the first good one before the store is made).
- Ctrl-C says what was stored (documents are written in transactions of
  :data:`~octomem.engine.pipeline.DOCS_PER_TRANSACTION`, so a batch is stored whole or
  not at all) and what was not, how to finish (ingest the same paths again: what is
  stored is skipped as unchanged, and its chunks left without a vector are embedded;
  ``octomem reindex`` embeds any scope's), and ends with status 130. Before the first
  batch committed it is one line, ``interrupted before anything was stored``, and a store
  this ingest created is deleted again (:meth:`~..memory.scopes.ScopeSet.discard_if_empty`),
  as it is when an error ends the ingest before then (a full disk refused the first batch).
- A transcript's last line that has no newline at its end and is not valid JSON is
  being written: it is left out with a note (``note: FILE:LINE: left out: ...``) and read
  on the next ingest; a malformed line anywhere else is an error.
- A document or turn forgotten deliberately (``forget``: in the scope's forget log) is
  not added again (the report line says ``N forgotten, not re-added``).
- Each transcript's summary line starts with its file as found (``chats/trip.jsonl (4
  turns): added ...``), on the first ingest and every one after; text files are summed up
  in one line (``9 files: ...``, named so only when the ingest has other parts).
- Chunks without a vector of the configured embedder are counted after every ingest and
  search (:func:`.unembedded.say_unembedded`).

The engine is imported by :func:`run` when the command runs, not when the CLI starts.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.text import Text

from ..errors import OctomemError, UsageValueError
from .folder_notes import say_left_alone, say_left_out, say_moved, turnless
from .ingest_store import store
from .options import INTERRUPTED, NOTHING_STORED
from .unembedded import say_unembedded
from .values import plural

#: How a folder that cannot be listed is named among the skipped (``DIR/: cannot be read``).
UNLISTED = "/: cannot be read"

if TYPE_CHECKING:
    from ..memory.facade import Memory
    from ..pipeline import Pipeline


@dataclass
class Tally:
    """What an ingest has stored so far, to tell after Ctrl-C.

    :param offered: label of every document handed to storage, in order.
    :param stored: how many of ``offered`` are committed (storage reports each batch
        after its transaction commits, in order).
    :param refused: ``(file, why)`` for each file named on the command line that was
        not ingested (``why`` names the file, and the line of a transcript).
    :param expected: how many documents the named sources hold (at most: a file that
        turns out empty or unreadable is not stored).
    :param parts: how many sources (the BEIR corpus, the files, each transcript) are to
        be stored; ``parts_stored``: how many are stored whole.
    :param skipped: ``(file, why)`` for each file inside a named folder skipped for an
        error (noted as it was skipped; ``why`` names the file).
    :param named: the files named on the command line (one a forget keeps out whole is
        refused: :func:`.screened_notes.say_screened`).
    :param to_embed: chunks the ingest set out to embed after storing; ``embedded``: how
        many of them it has embedded (counted after each batch, so it can lag one batch).
    :param sources: files and transcripts found under the named paths.
    :param scope: the scope written to, once checked; ``pipeline``: its pipeline, once
        open; ``made``: whether this ingest set out to create its store (none existed).
    :param files_read: the text files' documents as stored; ``files_added``: the ids of
        those added (for what moved: :func:`say_moved`).
    :param unwritten: why the vectors of a part could not be written (the disk is full,
        the store turned read-only): its chunks are stored, found by their words.
    """

    offered: list[str] = field(default_factory=list)
    expected: int = 0
    stored: int = 0
    embedded: int = 0
    to_embed: int = 0
    parts: int = 0
    parts_stored: int = 0
    refused: list[tuple[Path, str]] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)
    named: set[Path] = field(default_factory=set)
    sources: int = 0
    scope: str | None = None
    pipeline: Pipeline | None = None
    made: bool = False
    files_read: list[Any] = field(default_factory=list)
    files_added: list[str] = field(default_factory=list)
    unwritten: str | None = None

    def watch(self, docs: Iterable[Any]) -> Iterator[Any]:
        """Yield ``docs``, noting each one's label (uri, else id) as it is offered."""
        for doc in docs:
            self.offered.append(str(doc.uri or doc.id))
            yield doc


def run(console: Console, err: Console, memory: Memory, paths: list[Path] | None,
        beir: Path | None, scope: str, fmt: str, honour_ignores: bool = True,
        readd: bool = False, tags: tuple[str, ...] = ()) -> None:
    """Ingest ``paths`` and ``beir`` into ``scope`` (see the module docstring); ``readd``:
    store again what was forgotten (:mod:`~..memory.tombstones`); ``tags``: given to every
    document and turn stored (``--tag``), after a file's own front matter tags.

    :raises OctomemError: a named path is missing or unreadable (nothing stored), or a
        named file was not ingested (the others were).
    :raises typer.Exit: status 130 after Ctrl-C, once what was stored is said.
    """
    tally = Tally()
    try:
        ingest(tally, console, err, memory, paths, beir, scope, fmt, honour_ignores, readd,
               tags)
    except KeyboardInterrupt:
        discard_unused(memory, tally)
        say_interrupted(err, tally, scope)
        raise typer.Exit(INTERRUPTED) from None
    except OctomemError:  # e.g. a full disk refused the first batch (trial 19 K3)
        discard_unused(memory, tally)
        raise


def discard_unused(memory: Memory, tally: Tally) -> None:
    """Delete the store this ingest created when it stopped (Ctrl-C, an error) before
    its first batch committed: "an ingest that stores nothing creates no store"
    (:meth:`~..memory.scopes.ScopeSet.discard_if_empty`, which keeps a store holding
    anything, e.g. what another process wrote meanwhile)."""
    if tally.made and tally.stored == 0 and tally.scope is not None:
        memory.scopes.discard_if_empty(tally.scope)  # type: ignore[arg-type]
        tally.pipeline = None


def ingest(tally: Tally, console: Console, err: Console, memory: Memory,
           paths: list[Path] | None, beir: Path | None, scope: str, fmt: str,
           honour_ignores: bool, readd: bool, tags: tuple[str, ...] = ()) -> None:
    """Do what :func:`run` says, noting in ``tally`` how far it got.

    :raises OctomemError: as :func:`run`.
    :raises KeyboardInterrupt: Ctrl-C, for :func:`run` to say what was stored.
    """
    from ..memory.folders import IngestReport, reconcile
    from ..memory.ingest import with_tags
    from ..memory.limits import check_tags
    from ..memory.own_rows import corpus_rows
    from ..memory.own_turns import check_own_turns, turn_owner
    from ..memory.readable import shown
    from ..memory.sources import (
        NOTHING_TO_READ,
        beir_corpus_path,
        beir_documents,
        check_beir_corpus,
        find_sources,
    )
    from ..memory.transcripts import read_transcript
    from ..pipeline import AddReport
    from . import memory as show
    from . import render

    chosen = tally.scope = show.check_write_scope(scope)
    tags = check_tags(tags, memory.limits)  # before anything is read
    passed_over: list[Path] = []
    refused: list[tuple[Path, str]] = []  # named paths not ingested: an error at the end
    left_out: list[tuple[Path, str]] = []  # by .gitignore, .octomemignore, tool folders
    unlisted: list[tuple[Path, str]] = []  # folders inside that cannot be listed
    rows = 0
    if beir is not None:  # read whole first: a bad row stores none of the corpus
        repeated: list[str] = []
        try:
            rows = check_beir_corpus(beir, repeated)
            for note in repeated[:5]:
                err.print(Text.assemble(("note: ", "yellow"), note), highlight=False)
            if len(repeated) > 5:
                err.print(Text.assemble(("note: ", "yellow"), f"and {len(repeated) - 5} "
                                        "more rows whose _id came earlier"), highlight=False)
        except UsageValueError:
            raise
        except OctomemError as exc:
            if not paths:
                raise  # nothing else to ingest: no store created
            refused.append((beir, str(exc)))
            beir = None
    files, found = find_sources(paths, fmt, passed_over, refused, honour_ignores,
                                left_out, unlisted) if paths else ([], [])
    if left_out:
        say_left_out(err, left_out)
    if passed_over:
        say_left_alone(err, passed_over, fmt)
    named = {p for p in paths or () if p.is_file()}
    found_in = [*files, *(f for f, _ in found)]
    failed = {p for p, _ in refused}  # e.g. a folder that cannot be listed: said once
    refused += [  # a folder with nothing to read: an error at the end, too
        (p, f"{NOTHING_TO_READ} in {p}") for p in paths or ()
        if p.is_dir() and p not in failed and not any(f.is_relative_to(p) for f in found_in)]
    if refused and len(refused) == len(paths or ()) and beir is None \
            and not memory.scopes.created(chosen):  # type: ignore[arg-type]
        raise OctomemError("; ".join(why for _, why in refused))  # no store created
    skipped = [(folder, f"{shown(folder)}{UNLISTED} ({why})") for folder, why in unlisted]
    for _, why in skipped:
        err.print(Text.assemble(("skipped: ", "yellow"), why), highlight=False)
    transcripts = []
    existing = (memory.scopes.get(chosen)  # type: ignore[arg-type]
                if memory.scopes.created(chosen) else None)  # type: ignore[arg-type]
    owner, seen = turn_owner(existing and existing.arms.storage), {}  # ids of other files
    for path, how in found:  # read whole before anything is stored: a bad line stores none
        try:
            notes: list[str] = []  # an unfinished last line: left out, read next time
            turns = check_own_turns(path, read_transcript(path, how, notes), owner, seen)
            transcripts.append((path, [with_tags(t, tags) for t in turns]))
            for note in notes:
                err.print(Text.assemble(("note: ", "yellow"), note), highlight=False)
        except OctomemError as exc:
            if path in named:
                refused.append((path, str(exc)))
            else:
                skipped.append((path, str(exc)))
                err.print(Text.assemble(("skipped: ", "yellow"), str(exc)), highlight=False)
    tally.refused, tally.skipped, tally.named = refused, skipped, {p.resolve() for p in named}
    tally.parts = (beir is not None) + bool(files) + sum(bool(t) for _, t in transcripts)
    tally.expected = len(files) + sum(len(t) for _, t in transcripts)
    tally.sources = len(files) + len(transcripts)
    docs: Iterator[Any] = (with_tags(d, tags) for d in show.file_documents(
        err, files, memory.limits, named, refused, skipped))
    pipeline = tally.pipeline = existing
    if pipeline is None:  # no store yet: created only when something is to be stored
        needed = beir is not None or any(turns for _, turns in transcripts)
        if not needed:  # the files, read up to the first one that can be stored
            docs, needed = peek(docs)
        if needed:
            tally.made = True  # before it exists: Ctrl-C may come while it is made
            pipeline = tally.pipeline = memory.scopes.require(
                chosen, create=True)  # type: ignore[arg-type]
    if beir is not None and pipeline is not None:
        tally.expected += rows
        rows_here = corpus_rows(pipeline.arms.storage, beir_documents(beir),
                                beir_corpus_path(beir))
        store(console, pipeline, (with_tags(d, tags) for d in rows_here), rows,
              f"{beir.name} corpus", tally)
    if files and pipeline is not None:
        store(console, pipeline, docs, len(files), plural(len(files), "file"), tally,
              quiet=all(f in named for f in files),  # only named files: each said why
              readd=readd, files=True)
    for path, turns in transcripts:
        if turns and pipeline is not None:
            store(console, pipeline, turns, len(turns),
                  f"{shown(path)} ({plural(len(turns), 'turn')})", tally, whole=True,
                  gone=(chosen, memory.on_missing), named=True, readd=readd)
        elif path in named:
            tally.refused.append((path, f"{path}: no turns in it"))
        else:
            err.print(Text.assemble(("note: ", "yellow"), f"{path}: no turns in it"),
                      highlight=False)
    tally.refused += turnless(paths or (), [*files, *(f for f, _ in skipped)], transcripts)
    if tally.parts_stored == 0 and (tally.skipped or transcripts or not named.issuperset(
            files)):  # read, none stored (files in folders: store() said it if it ran)
        render.ingest_report(console, AddReport(), 0, None)
    failed = bool(tally.refused)  # then only reported, none forgotten (a file skipped
    # for an error is still there: it keeps its document; a gone file is gone either way)
    for folder in (p for p in paths or () if p.is_dir() and pipeline is not None):
        show.gone_files(console, reconcile(  # files it no longer holds
            chosen, pipeline, folder, "keep" if failed else memory.on_missing,
            IngestReport(), memory.roots.project), "this ingest failed" if failed else None)
    if pipeline is not None and tally.files_added:  # after a moved folder's (reconcile)
        say_moved(console, pipeline, chosen, tally.files_read, tally.files_added)
    if pipeline is not None:
        say_unembedded(err, [(scope, pipeline)])
    fail(tally)


def peek(docs: Iterator[Any]) -> tuple[Iterator[Any], bool]:
    """Return ``docs`` whole again and whether it holds anything, having read its first
    item (a file that cannot be stored before it is read, noted or refused as it is)."""
    first = next(docs, None)
    return (docs if first is None else chain([first], docs)), first is not None


def fail(tally: Tally) -> None:
    """End an ingest that stored what it could with one error line when a named file was
    not ingested (each named, with why) or a file inside a folder was skipped for an
    error (counted: each was noted above as ``skipped:``), or the vectors could not be
    written (trial 19 K3: a full disk ended such an ingest with status 0).

    :raises OctomemError: any of those happened.
    """
    parts = []
    if tally.unwritten:
        parts.append(f"vectors not written: {tally.unwritten} (the documents were stored and "
                     "are found by their words; the next ingest embeds them)")
    if tally.refused:  # each names its path, whatever else was stored
        parts.append("; ".join(why for _, why in tally.refused))
    if tally.skipped:
        rest = "the rest was stored" if tally.offered else "nothing else was there to store"
        folders = sum(why.endswith(UNLISTED, 0, why.rfind(" (")) for _, why in tally.skipped)
        what = " and ".join(plural(n, kind) for n, kind in (
            (folders, "folder"), (len(tally.skipped) - folders, "file")) if n)
        parts.append(f"{what} in the folders skipped for an error (each noted above as "
                     f"skipped:); {rest}")
    if parts:
        raise OctomemError("; ".join(parts))


def say_interrupted(err: Console, tally: Tally, scope: str) -> None:
    """Tell, after Ctrl-C, what an ingest stored and what it did not: one line
    (:data:`NOTHING_STORED`) when it stored nothing.

    :param tally: how far it got; its ``pipeline``: the scope written to, ``None`` when no
        store is there (none was, or the empty one this ingest made was deleted).
    """
    pipeline, sources = tally.pipeline, tally.sources
    if tally.stored == 0:  # a batch in progress rolled back, or not even begun
        err.print(Text(NOTHING_STORED), highlight=False)
        return
    left = tally.offered[tally.stored:]
    line = f"interrupted: {tally.stored:,} of {plural(tally.expected, 'document')} stored" \
        + (f" (from {plural(sources, 'file')} found)" if sources else "")
    if left:
        line += (f"; rolled back: the batch in progress, {left[0]}"
                 + (f" and {len(left) - 1:,} more" if len(left) > 1 else ""))
    unread = tally.expected - tally.stored - len(left)
    if unread > 0:
        line += f"; not reached: {plural(unread, 'document')}"
    unembedded = tally.to_embed > tally.embedded  # the count lags a batch: the store's below
    if unembedded:
        line += "; embedding interrupted (the chunks left without a vector are counted below)"
    err.print(Text(line), highlight=False)
    if left or tally.parts_stored < tally.parts or unembedded:
        err.print(Text("run the same ingest again to store and embed the rest: what is "
                       "stored is skipped as unchanged"), highlight=False)
    try:
        say_unembedded(err, [(scope, pipeline)] if pipeline is not None else [])
    except Exception:  # noqa: BLE001 - the store may be mid-write; the lines above stand
        return
