"""JSON-ready models of an ingest's answer, shared by the MCP ``ingest`` tool and the
tests: every count, the first ids of each kind and the first entries of each problem
list (:func:`ingest_result`), and what a stop left undone (:func:`stopped_note`).
Re-exported by :mod:`.results`, where the other operations' models are.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from ..pipeline import AddReport
from .readable import shown
from .tombstones import LeftOut, notes

#: Most ids an ingest answer lists under each of added, revised and unchanged (all are
#: counted under ``counts``): 1,000 files' ids were ~74 KB, ~18k tokens of an agent's
#: context, and no agent reads them.
IDS_SHOWN = 10
#: Most entries an ingest answer lists under each problem list (skipped, missing, ...).
PROBLEMS_SHOWN = 50


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
