"""JSON-ready models of the memory operations, shared by the MCP tools and ``--json`` output.

A recall answer's models are in :mod:`.recall_results` (re-exported here); the items,
remember, forget and ingest results are here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from ..pipeline import AddReport
from ..turns import TURN_KIND
from ..types import Chunk, Document
from .duplicates import NearDuplicate
from .forget import ForgetOutcome, handed_on_line
from .forget_path import forgot_path_line, kept_turns_line
from .limits import preview
from .models import StoredItem
from .readable import shown
from .recall_results import (  # noqa: F401 (a recall answer's models: this module's API too)
    MemoryCollapsed,
    MemoryHit,
    MemoryRecallResult,
    memory_hit,
    recall_result,
)
from .remember import Remembered
from .times import iso_or_none as iso
from .tombstones import LeftOut, notes

#: Most ids an ingest answer lists under each of added, revised and unchanged (all are
#: counted under ``counts``): 1,000 files' ids were ~74 KB, ~18k tokens of an agent's
#: context, and no agent reads them.
IDS_SHOWN = 10
#: Most entries an ingest answer lists under each problem list (skipped, missing, ...).
PROBLEMS_SHOWN = 50


class ScopedItem(StoredItem):
    """A stored statement or document, its scope, history and usage."""

    scope: str = Field(description="local (this project) or global (every project)")
    event_time: str | None = Field(None, description="when what it says happened, ISO-8601 UTC")
    supersedes: str | None = Field(None, description="id of the statement this one replaced")
    superseded_by: str | None = Field(None, description="id of the statement that replaced it")
    valid_to: str | None = Field(None, description="when it stopped being current (superseded)")
    revision: int = Field(1, description="1, plus one per changed re-ingest")
    recalls: int = Field(0, description="how many recall answers returned it")
    last_recalled_at: str | None = None


def scoped_item(scope: str, doc: Document) -> ScopedItem:
    """Convert a stored document and its scope (a stored time that cannot be shown, left
    by an older octomem, becomes null; ``octomem verify`` finds it)."""
    return ScopedItem(
        id=doc.id, text=doc.text, kind=doc.kind, tags=list(doc.tags), title=doc.title, uri=doc.uri,
        created_at=iso(doc.created_at), scope=scope, event_time=iso(doc.event_time),
        supersedes=doc.supersedes, superseded_by=doc.superseded_by, valid_to=iso(doc.valid_to),
        revision=doc.revision, recalls=doc.recalls, last_recalled_at=iso(doc.last_recalled_at),
    )


class NearDuplicateItem(BaseModel):
    """An existing statement that says nearly the same as the one just stored."""

    id: str
    scope: str
    text: str
    kind: str
    similarity: float = Field(description="cosine similarity of the two statements, up to 1.0")
    created_at: str | None = None


def near_duplicate_item(near: NearDuplicate) -> NearDuplicateItem:
    """Convert a near duplicate."""
    doc = near.document
    return NearDuplicateItem(id=doc.id, scope=near.scope, text=preview(doc.text), kind=doc.kind,
                             similarity=round(near.similarity, 4), created_at=iso(doc.created_at))


class RememberResult(ScopedItem):
    """A statement just stored, what it replaced, and what already says nearly the same."""

    embedded: bool = Field(
        description="its vector was written; when false it is found by its words only")
    semantic_error: str | None = Field(None, description="why no vector was written")
    near_duplicates: list[NearDuplicateItem] = Field(
        default_factory=list,
        description="up to 3 existing statements saying nearly the same; forget or supersede "
        "them if the new one makes them obsolete (the write itself is never refused)")
    replaced: list[ScopedItem] = Field(
        default_factory=list, description="previous handoffs this HANDOFF superseded")
    superseded: ScopedItem | None = Field(
        None, description="the statement `supersedes` named, now superseded (kept as history)")
    already_stored: bool = Field(
        False, description="true: this exact text (same event time, any kind) was already "
        "current in the scope, so nothing new was stored; id and kind are the stored ones")
    message: str | None = Field(
        None, description="when already stored with another kind than asked: how to change "
        "its kind (remember it again with that kind and `supersedes` set to its id); when "
        "`event_time` is in the future: that the statement is current now, and what `as_of` "
        "before then answers")


def remember_result(out: Remembered) -> RememberResult:
    """Convert what ``remember`` did; its text and the near duplicates' are previews
    (:data:`~.limits.PREVIEW_CHARS`): an answer never echoes a whole long input."""
    stored = out.document
    item = scoped_item(out.scope, stored).model_dump() | {"text": preview(stored.text)}
    return RememberResult(
        **item, embedded=out.embedded,
        semantic_error=out.semantic_error,
        near_duplicates=[near_duplicate_item(n) for n in out.near_duplicates],
        replaced=[scoped_item(out.scope, d) for d in out.replaced],
        superseded=scoped_item(out.scope, out.superseded) if out.superseded else None,
        already_stored=out.already_stored, message=other_kind(out) or future_event(out),
    )


def future_event(out: Remembered) -> str | None:
    """Say what a statement whose ``event_time`` is still to come means for answers (trial
    16 F1: a planned change recorded with ``supersedes`` was the current answer at once,
    while ``as_of`` now answered with the statement it supersedes); ``None`` otherwise."""
    event = out.document.event_time
    if out.already_stored or event is None or event <= time.time():
        return None
    when = iso(event)
    if out.superseded is None:
        return (f"event_time {when} is in the future: the statement is current now, and "
                "`as_of` before then does not find it")
    return (f"event_time {when} is in the future: this statement is the current answer now "
            f"(as a supersede is), while `as_of` a time before {when} answers with the one it "
            f"supersedes ({out.superseded.id}); to keep that one current until then, remember "
            "the change when it happens")


def other_kind(out: Remembered, cli: bool = False) -> str | None:
    """Say how to change the kind of a statement ``remember`` found already stored with
    another kind than asked (the MCP arguments, or with ``cli`` the ``octomem add``
    command); ``None`` otherwise."""
    asked, stored, doc_id = out.asked_kind, out.document.kind, out.document.id
    if not out.already_stored or asked is None or asked == stored:
        return None
    how = (f"octomem add TEXT --kind {asked} --supersedes {doc_id}" if cli
           else f"remember it again with kind {asked} and supersedes {doc_id}")
    return f"already stored as {stored}, not {asked}; to make it {asked}: {how}"


class ForgetResult(BaseModel):
    """What ``forget`` removed; or, for an ambiguous text, the statements it matched."""

    forgotten: ScopedItem | None = Field(
        None, description="the statement removed; null when the text matched several, or "
        "when a transcript's turns were forgotten by its path (see turns)")
    reason: str | None = Field(None, description="why, as given; kept in the forget log")
    matches: list[ScopedItem] = Field(
        default_factory=list,
        description="when the text matched several statements: all of them (none was removed; "
        "call forget again with one id)")
    handed_on: list[ScopedItem] = Field(
        default_factory=list,
        description="the statements the forgotten one had superseded, as they are now: "
        "current again (superseded_by null) when it was current, else superseded by its "
        "successor")
    turns_forgotten: int = Field(0, description="forget by a path: how many turns read "
                                 "from it (a transcript, or transcripts below a folder) "
                                 "were forgotten")
    turns: list[str] = Field(default_factory=list, description="their ids (the first "
                             f"{IDS_SHOWN})")
    files_forgotten: int = Field(0, description="forget by a path: how many ingested "
                                 "files read from it (the file, or files below a folder) "
                                 "were forgotten")
    files: list[str] = Field(default_factory=list, description="their ids (the first "
                             f"{IDS_SHOWN})")
    message: str


def forget_result(out: ForgetOutcome) -> ForgetResult:
    """Convert what ``forget`` did."""
    if out.forgotten is None:
        matches = [scoped_item(s, d) for s, d in out.matches]
        listed = ", ".join(f"{m.id} ({m.scope})" for m in matches)
        return ForgetResult(forgotten=None, reason=out.reason, matches=matches, message=(
            f"{len(matches)} statements have this exact text, none was removed; forget one "
            f"by id: {listed}"))
    scope, doc = out.forgotten
    said = "".join(f"; {handed_on_line(d)}" for d in out.handed_on)
    return ForgetResult(forgotten=scoped_item(scope, doc), reason=out.reason,
                        handed_on=[scoped_item(scope, d) for d in out.handed_on],
                        message=f"forgot {doc.id} from the {scope} scope{said}")


def forget_path_result(path: str, where: Path, scope: str, docs: list[Document],
                       kept: dict[Path, int], reason: str | None) -> ForgetResult:
    """Convert what ``forget`` of a path did: every file and turn read from it
    forgotten (turns of transcripts gone from a folder kept and said)."""
    turns = [d.id for d in docs if d.kind == TURN_KIND]
    files = [d.id for d in docs if d.kind != TURN_KIND]
    more = (f"; turns and files list the first {IDS_SHOWN}"
            if max(len(turns), len(files)) > IDS_SHOWN else "")
    keep_out = "; an ingest keeps them out (readd: true stores them again)" if docs else ""
    return ForgetResult(reason=reason, turns_forgotten=len(turns), turns=turns[:IDS_SHOWN],
                        files_forgotten=len(files), files=files[:IDS_SHOWN],
                        message=f"{forgot_path_line(path, where, scope, docs)}{keep_out}"
                        f"{more}{kept_turns_line(where, kept)}")


class GoneFileItem(BaseModel):
    """A file an ingested folder no longer holds."""

    id: str = Field(description="its document's id")
    path: str = Field(description="where the file was")
    moved_to: str | None = Field(None, description=(
        "the file the folder holds in its place now that it moved (with its project), "
        "stored by this ingest; null: the file is gone"))


class SkippedFileItem(BaseModel):
    """A file inside an ingested folder that could not be read; nothing of it is stored."""

    path: str
    why: str = Field(description="the error, naming the file (and line)")


class IngestResult(BaseModel):
    """What an ingest did: every count, the first :data:`IDS_SHOWN` ids of each kind and
    the first :data:`PROBLEMS_SHOWN` entries of each problem list."""

    scope: str
    message: str = Field("", description="one line: what was stored, and what the lists "
                         "leave out")
    counts: dict[str, int] = Field(
        default_factory=dict, description="how many documents were added, revised and "
        "unchanged, and the full length of each list below (a list holds at most "
        f"{IDS_SHOWN} ids, or {PROBLEMS_SHOWN} problems: the first ones)")
    added: list[str] = Field(default_factory=list, description=f"ids of new documents (the "
                             f"first {IDS_SHOWN}; counts.added has them all)")
    revised: list[str] = Field(
        default_factory=list, description="ids whose content changed: stored as a new "
        f"revision (the first {IDS_SHOWN})")
    unchanged: list[str] = Field(default_factory=list, description="ids re-ingested "
                                 f"identically (the first {IDS_SHOWN})")
    chunks: int = Field(description="chunks stored by this call")
    embedded: int = Field(description="chunks embedded by this call")
    embedded_earlier: int = Field(
        0, description="of those, chunks of unchanged documents that an earlier ingest "
        "(killed, or its embedder failing) left without a vector")
    semantic_error: str | None = None
    missing: list[GoneFileItem] = Field(
        default_factory=list, description="files the ingested folder held before and no "
        "longer does, and turns an ingested transcript held before and no longer does "
        "(path: the transcript)")
    forgotten: list[GoneFileItem] = Field(
        default_factory=list, description="of those, the ones forgotten (setting "
        "ingest.on_missing, default forget; the forget log keeps the reason)")
    skipped: list[SkippedFileItem] = Field(
        default_factory=list, description="files inside the folder that could not be read "
        "(a malformed transcript line, not UTF-8, too large): left out; the rest was stored")
    forgotten_not_readded: list[str] = Field(
        default_factory=list, description="forgotten ids (in the scope's forget log) whose "
        "file or turn text was read again: not added again (see forgotten_left_out)")
    forgotten_left_out: list[str] = Field(
        default_factory=list, description="each one named: 'not re-added: FILE (forgotten "
        "TIME)', or 'FILE: turn ID (now read as ID2)' for a forgotten turn whose line moved; "
        "readd: true stores them again")
    readded: list[str] = Field(
        default_factory=list, description="what readd stored again although forgotten")
    renamed: list[str] = Field(
        default_factory=list, description="'ID -> NEW': a turn whose position's id was "
        "forgotten holds another text now, stored under a fresh id")
    unfinished: list[str] = Field(
        default_factory=list, description="transcripts whose last line was still being "
        "written (no newline at its end, not JSON): that line left out, read next time")
    empty_lines: list[str] = Field(
        default_factory=list, description="chat transcripts with lines whose text is empty "
        "or null (a tool-only message): those lines left out, counted and named per file")
    messages_left_out: list[str] = Field(
        default_factory=list, description="transcripts with messages left out on purpose, "
        "counted per file: a Claude Code session's branch the user rewound away from (it "
        "goes on from the edited message), a chat's system, developer or tool lines")
    moved: list[str] = Field(
        default_factory=list, description="'OLD -> NEW': a file stored from a new path "
        "whose document from the old path (gone) held the same text: that one forgotten; "
        "a moved transcript's turns are revised to name the new path (counts.revised)")
    stopped: str | None = Field(
        None, description="set when the server was being stopped while this ingest ran: "
        "what it left undone (what is stored stays; ingesting the same path again, or "
        "`octomem reindex`, embeds the rest)")


def _shown_source(one: LeftOut) -> str:
    return _shown_uri(one.source)


def _shown_uri(source: str) -> str:
    """Return a ``file:`` uri as its path (as :func:`shown` shows it), else ``source``."""
    if not source.startswith("file:"):
        return source
    from urllib.parse import unquote, urlparse

    return shown(Path(unquote(urlparse(source).path)))


def ingest_result(scope: str, report: AddReport) -> IngestResult:
    """Convert an ingest's :class:`~octomem.engine.pipeline.AddReport` (a
    :class:`~.folders.IngestReport`'s missing and forgotten files included), its lists
    cut to their first entries (:func:`shortened`)."""
    def gone(name: str) -> list[GoneFileItem]:
        return [GoneFileItem(id=g.id, path=g.path, moved_to=g.moved_to)
                for g in getattr(report, name, ())]

    return shortened(_full_ingest_result(scope, report, gone))


#: The lists of ids, each cut to :data:`IDS_SHOWN`; every other list is a problem list.
_ID_LISTS = ("added", "revised", "unchanged")


def shortened(result: IngestResult) -> IngestResult:
    """Return ``result`` with every list counted under ``counts`` and cut to its first
    :data:`IDS_SHOWN` ids (added, revised, unchanged) or :data:`PROBLEMS_SHOWN` entries,
    and ``message`` saying so."""
    counts: dict[str, int] = {}
    update: dict[str, object] = {}
    cut: list[str] = []
    for name in IngestResult.model_fields:
        value = getattr(result, name)
        if not isinstance(value, list):
            continue
        counts[name] = len(value)
        shown = IDS_SHOWN if name in _ID_LISTS else PROBLEMS_SHOWN
        if len(value) > shown:
            update[name] = value[:shown]
            cut.append(f"{name} {shown} of {len(value)}")
    ids = ", ".join(f"{counts[n]} {n}" for n in _ID_LISTS)
    problems = "".join(f", {counts[n]} {n}" for n in ("skipped", "missing", "forgotten")
                       if counts[n])
    listed = (f"; listed: the first ones only ({'; '.join(cut)}): recall finds the "
              "documents, octomem://item/{id} reads one" if cut else "")
    stopped = f"{result.stopped}; " if result.stopped else ""
    return result.model_copy(update={**update, "counts": counts,
                                     "message": f"{stopped}{ids}{problems}{listed}"})


def _full_ingest_result(scope: str, report: AddReport,
                        gone: Callable[[str], list[GoneFileItem]]) -> IngestResult:
    """Convert ``report`` with every list whole."""
    return IngestResult(scope=scope, added=report.added, revised=report.replaced,
                        unchanged=report.unchanged, chunks=report.chunks,
                        embedded=report.embedded,
                        embedded_earlier=len(report.resumed) if report.embedded else 0,
                        semantic_error=report.semantic_error,
                        missing=gone("missing"), forgotten=gone("forgotten"),
                        skipped=[SkippedFileItem(path=shown(path), why=why)
                                 for path, why in getattr(report, "skipped", ())],
                        forgotten_not_readded=list(getattr(report, "skipped_forgotten", ())),
                        forgotten_left_out=[
                            line.replace("--readd", "readd: true") for line in notes(
                                getattr(report, "left_out", ()), _shown_source)],
                        readded=notes(getattr(report, "readded", ()), _shown_source, True),
                        renamed=[f"{a} -> {b}" for a, b in getattr(report, "renamed", ())],
                        unfinished=list(getattr(report, "unfinished", ())),
                        empty_lines=list(getattr(report, "empty_lines", ())),
                        messages_left_out=list(getattr(report, "messages_left_out", ())),
                        moved=[f"{shown(a)} -> {shown(b)}"
                               for a, b in getattr(report, "moved_files", ())],
                        stopped=stopped_note(report))


def stopped_note(report: AddReport) -> str | None:
    """Return what a stop requested during the ingest left undone (``None``: nothing)."""
    unembedded, not_stored = report.stopped_unembedded, getattr(report, "not_stored", 0)
    if not unembedded and not not_stored:
        return None
    undone = [f"{unembedded:,} chunks left without a vector (found by their words)"
              if unembedded else "", f"{not_stored:,} documents not stored" if not_stored
              else ""]
    return ("stopped early, the server is shutting down: " + " and ".join(u for u in undone if u)
            + "; what is stored stays: ingest the same path again (or run `octomem "
            "reindex`) to finish")


class ChunkItem(BaseModel):
    """One stored chunk of a document, with its validity."""

    chunk_id: int
    ordinal: int
    revision: int
    text: str
    valid_from: str | None = None
    valid_to: str | None = Field(None, description="when this chunk stopped being current")


def chunk_item(chunk: Chunk) -> ChunkItem:
    """Convert a chunk."""
    return ChunkItem(chunk_id=chunk.id, ordinal=chunk.ordinal, revision=chunk.revision,
                     text=chunk.text, valid_from=iso(chunk.valid_from),
                     valid_to=iso(chunk.valid_to))


class ItemResult(ScopedItem):
    """One stored statement or document with its provenance and chunks."""

    store: str = Field(description="the scope directory that holds it")
    chunks: list[ChunkItem] = Field(
        default_factory=list, description="its chunks, every revision, in order")
    chunk: ChunkItem | None = Field(None, description="the chunk that was asked for, if one was")
    version: str | None = Field(
        None, description="fingerprint of its content and history state; a write that names "
        "it is refused once the item has changed")
