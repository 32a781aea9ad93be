"""JSON-ready models of the memory operations, shared by the MCP tools and ``--json`` output.

A recall answer's models are in :mod:`.recall_results`, an ingest's in
:mod:`.ingest_results` (both re-exported here); the items, remember and forget results
are here.
"""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel, Field

from ..turns import TURN_KIND
from ..types import Chunk, Document
from .duplicates import NearDuplicate
from .forget import ForgetOutcome, handed_on_line
from .forget_path import forgot_path_line, kept_turns_line
from .ingest_results import (  # noqa: F401 (an ingest's models: this module's API too)
    IDS_SHOWN,
    PROBLEMS_SHOWN,
    GoneFileItem,
    IngestResult,
    SkippedFileItem,
    ingest_result,
    shortened,
    stopped_note,
)
from .limits import preview
from .models import StoredItem
from .recall_results import (  # noqa: F401 (a recall answer's models: this module's API too)
    MemoryCollapsed,
    MemoryHit,
    MemoryRecallResult,
    memory_hit,
    recall_result,
)
from .remember import Remembered
from .times import iso_or_none as iso


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
        "before then answers; when `event_time` is before the superseded statement began: "
        "that it now holds at no time, and how to keep it valid until this change")


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
        already_stored=out.already_stored,
        message=other_kind(out) or " ".join(filter(None, (future_event(out), held_never(out))))
        or None,
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


def held_never(out: Remembered, cli: bool = False) -> str | None:
    """Say that the statement ``out`` superseded now holds at no time, when this one's
    ``event_time`` is before the time that one became valid (trial 21: "The office is in
    Leeds", from 2024-09-01, superseded by "… York" with event_time 2024-01-01, was left
    valid from 2024-09-01 to 2024-01-01, and no ``as_of`` found it, silently), and how to
    keep it valid until the change instead (with ``cli``: the CLI's commands and
    options); ``None`` otherwise."""
    old, new = out.superseded, out.document
    if old is None or out.already_stored or new.valid_from >= old.valid_from:
        return None
    began, changed = iso(old.valid_from), iso(new.valid_from)
    as_of, history = ("--as-of", "--include-superseded") if cli else ("`as_of`",
                                                                     "`include_superseded`")
    undo = (f"`octomem forget {new.id}` (that makes {old.id} current again) and add it again "
            "with an --event-time" if cli else
            f"forget {new.id} (that makes {old.id} current again) and remember it again with "
            "an event_time")
    return (f"the superseded statement {old.id} held from {began}, after this one's "
            f"event_time {changed}: it now holds at no time, so no {as_of} returns it "
            f"({history} still lists it). That is right if it was never true; if it held "
            f"until this change, {undo} after {began}")


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
