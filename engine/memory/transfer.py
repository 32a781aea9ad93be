"""``octomem export`` and ``octomem import``: a scope as JSON Lines, losslessly.

One JSON object per line. The first is the header, then one line per stored document
(current and superseded, oldest first), then one per forget-log entry::

    {"type": "octomem-export", "format": 2, "scope": "local", "exported_at": "...", ...}
    {"type": "document", "id": "...", "text": "...", "kind": "FACT", "tags": [...],
     "created_at": "2025-01-01T00:00:00.25Z", "event_time": null, "supersedes": null,
     "superseded_by": "...", "valid_to": "2025-03-01T00:00:00Z", "revision": 1,
     "recalls": 3, "last_recalled_at": "2025-03-03T07:06:40Z", "title": null, "uri": null,
     "metadata": {}}
    {"type": "forgotten", "id": "...", "kind": "ITEM", "content_sha256": "...",
     "created_at": "...", "forgotten_at": "...", "reason": "..."}

Times are ISO-8601 UTC whose fraction of a second reads back to the exact stored float
(:mod:`.exact_times`); format 1 files, whose times are epoch seconds, still import. A
document whose stored chunks are not simply
its text (several chunks, or chunks of earlier revisions) carries them under
``"chunks"`` (ordinal, text, revision, valid_from, valid_to). Vectors are not exported:
import embeds again, outside the write transaction. Importing skips documents the
target scope has forgotten, so an old export never brings a forgotten statement back,
and never writes an older state over a newer one (:mod:`.import_plan`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import IO, Any

from ..arms import VersionedStorage
from ..errors import (
    EmbedderMismatchError,
    EmbedderUnavailableError,
    OctomemError,
    UsageValueError,
)
from ..pipeline import Pipeline
from ..types import Chunk, Document, ForgetRecord
from .exact_times import exact_epoch, exact_iso
from .facade import Memory
from .forget import is_tombstone, remove
from .handoffs import keep_newest_handoff
from .import_plan import Incoming, check_links, plan
from .import_records import DOC_FIELDS, parse_document, parse_forgotten
from .json_line import LineNotJSON, parse_line
from .limits import refused_tags
from .markdown import MARKDOWN_TITLE, forgotten_predecessors, render_markdown
from .scopes import ScopeName, check_scope
from .times import iso
from .transcripts import CLAUDE_TYPES

FORMAT = 2
#: Export formats ``import`` reads: 1 wrote times as epoch seconds, 2 as ISO-8601.
READABLE_FORMATS = (1, 2)
#: Time fields of each record type (``chunks`` entries: ``valid_from``, ``valid_to``).
_TIME_FIELDS = {"document": ("created_at", "event_time", "valid_to", "last_recalled_at"),
                "forgotten": ("created_at", "forgotten_at")}
_DOC_FIELDS = DOC_FIELDS


def _storage(pipeline: Pipeline) -> Any:
    storage = pipeline.arms.storage
    if not isinstance(storage, VersionedStorage):
        raise OctomemError(f"storage {storage.name!r} keeps no history; export needs one that does")
    return storage


def _iso(ts: float | None) -> str | None:
    return None if ts is None else exact_iso(ts)


def _document_line(doc: Document, chunks: list[Chunk]) -> dict[str, Any]:
    line: dict[str, Any] = {"type": "document"}
    line.update({name: getattr(doc, name) for name in _DOC_FIELDS})
    for name in _TIME_FIELDS["document"]:
        line[name] = _iso(line[name])
    line["tags"] = list(doc.tags)
    line["metadata"] = dict(doc.metadata)
    if len(chunks) != 1 or chunks[0].text != doc.text or chunks[0].revision != doc.revision:
        line["chunks"] = [
            {"ordinal": c.ordinal, "text": c.text, "revision": c.revision,
             "valid_from": _iso(c.valid_from), "valid_to": _iso(c.valid_to)} for c in chunks
        ]
    return line


def _epochs(obj: dict[str, Any], where: str) -> dict[str, Any]:
    """Return a record with its times as epoch seconds (read from ISO-8601 or numbers).

    :raises OctomemError: naming ``where`` and the field: a time that is neither.
    """
    out = dict(obj)
    try:
        for name in _TIME_FIELDS.get(obj.get("type", ""), ()):
            if out.get(name) is not None:
                out[name] = exact_epoch(out[name], name)
        if isinstance(out.get("chunks"), list):
            out["chunks"] = [
                {**c, **{k: exact_epoch(c[k], f"chunks[{i}].{k}") for k in ("valid_from",
                                                                            "valid_to")
                         if c.get(k) is not None}} if isinstance(c, dict) else c
                for i, c in enumerate(out["chunks"])]
    except ValueError as exc:
        raise OctomemError(f"{where}: {exc}; nothing was imported") from None
    return out


def export_lines(memory: Memory, scope: str) -> Iterator[dict[str, Any]]:
    """Yield the JSONL objects of ``scope``: header, documents (oldest first), forget log."""
    chosen: ScopeName = check_scope(scope) or "local"
    pipeline = memory.scopes.require(chosen)
    memory.recall_log.flush()  # the recall counts as of now
    storage = _storage(pipeline)
    embedder = pipeline.arms.embedder
    yield {"type": "octomem-export", "format": FORMAT, "scope": chosen,
           "exported_at": iso(time.time()), "store": str(memory.roots.of(chosen)),
           "embedder": embedder.model_id if embedder is not None else None}
    for doc in reversed(list(storage.iter_documents(include_superseded=True))):
        yield _document_line(doc, storage.document_chunks(doc.id))
    for record in storage.iter_forgotten():
        line = {"type": "forgotten", **asdict(record)}
        yield {**line, **{k: _iso(line[k]) for k in _TIME_FIELDS["forgotten"]}}


def export_scope(memory: Memory, scope: str, fmt: str, out: IO[str],
                 warnings: list[str] | None = None) -> int:
    """Write ``scope`` to ``out`` as ``jsonl`` (lossless) or ``md`` (for people).

    :param warnings: receives what the Markdown left out (times that cannot be shown).
    :returns: the number of documents written.
    :raises OctomemError: an unknown format, or the scope does not exist.
    """
    if fmt == "md":
        chosen: ScopeName = check_scope(scope) or "local"
        everything = memory.statements(chosen, include_superseded=True)
        current = [d for d in everything if d.is_current]
        pipeline = memory.scopes.get(chosen)
        gone = forgotten_predecessors(pipeline.arms.storage, everything) if pipeline else set()
        text = render_markdown(chosen, str(memory.roots.of(chosen)), current,
                               [d for d in everything if not d.is_current], warnings,
                               snippet=None, gone=gone)
        # Line by line, as the JSON Lines: one write of the whole text into a pipe whose
        # reader went away was cut at the pipe's size without an error (exit status 0:
        # trial 16 F13); smaller writes meet the closed pipe as BrokenPipeError.
        for line in text.splitlines(keepends=True):
            out.write(line)
        return len(everything)
    if fmt != "jsonl":
        raise UsageValueError(f"--format: must be 'jsonl' or 'md', got {fmt!r}")
    written = 0
    for line in export_lines(memory, scope):
        out.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
        written += line["type"] == "document"
    return written


@dataclass(slots=True)
class ImportReport:
    """What an import did (document ids per outcome).

    :param forgotten_left: forget-log entries not copied: the file is another scope's.
    :param forgotten_known: forget-log entries the scope's log already held as they are.
    :param forgotten_here: ids this scope still held that the file's forget log says were
        forgotten: forgotten here too (their entries logged).
    :param older: ``(id, why)`` of documents stored further along than the file's record
        (a later revision, or superseded since): kept as stored.
    :param conflicts: ``(id, why)`` of documents the file and the store changed
        differently (or whose supersede link would not hold): kept as stored.
    :param refused_tags: ``(id, why)`` of documents stored with tags ``remember`` would
        refuse (a space, a control character, too long, too many): kept as the file has
        them, as ``recall``'s tags filter matches them exactly.
    :param split_tags: ``(id, what)`` of documents written whose tags held a comma: split
        into the tags meant (``billing,api`` into ``billing`` and ``api``), as ``remember``
        would have them and ``recall``'s tags filter can name them (:mod:`..labels`).
    :param handoffs_superseded: ``(id, newest id)`` of each handoff superseded because the
        file and the store each held a current one (:mod:`.handoffs`).
    """

    scope: str
    added: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped_forgotten: list[str] = field(default_factory=list)
    older: list[tuple[str, str]] = field(default_factory=list)
    conflicts: list[tuple[str, str]] = field(default_factory=list)
    forgotten_here: list[str] = field(default_factory=list)
    forgotten_logged: int = 0
    forgotten_left: int = 0
    forgotten_known: int = 0
    handoffs_superseded: list[tuple[str, str]] = field(default_factory=list)
    refused_tags: list[tuple[str, str]] = field(default_factory=list)
    split_tags: list[tuple[str, str]] = field(default_factory=list)
    embedded: int = 0
    semantic_error: str | None = None


def read_lines(lines: Iterable[str], source: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` of a JSONL export, the header checked.

    :raises OctomemError: naming ``source`` and the line for invalid JSON or text that is
        not UTF-8, a missing or unsupported header (an empty file too), or an unknown
        record type.
    """
    seen_header = False
    for number, raw in enumerate(_decoded(lines, source), start=1):
        if not raw.strip():
            continue
        try:
            obj = parse_line(raw)
        except LineNotJSON as exc:
            if not seen_header:
                obj = None
            else:
                raise OctomemError(f"{source}:{number}: not valid JSON: {exc.why}") from None
        kind = obj.get("type") if isinstance(obj, dict) else None
        if not seen_header:
            readable = isinstance(obj, dict) and obj.get("format") in READABLE_FORMATS
            if kind != "octomem-export" or not readable:
                raise OctomemError(f"{source}:{number}: not an octomem JSONL export (format "
                                   f"1 or 2); {_not_export_hint(obj, raw)}")
            seen_header = True
        elif kind not in ("document", "forgotten"):
            raise OctomemError(f"{source}:{number}: unknown record type {kind!r}")
        yield number, obj
    if not seen_header:
        raise OctomemError(f"{source}: empty; not an octomem JSONL export (format 1 or 2)")


def _not_export_hint(first: Any, raw: str = "") -> str:
    """Say what a file that is not an export looks like from its first line (``first``,
    its JSON value, ``None`` when it is not JSON; ``raw``, its text) and which command
    reads it."""
    if isinstance(first, dict) and ("sessionId" in first or first.get("type") in CLAUDE_TYPES
                                    or ("text" in first and ("speaker" in first
                                                             or "role" in first))):
        return "it reads as a conversation transcript: to add it, use `octomem ingest`"
    if first is None and raw.startswith(MARKDOWN_TITLE):
        return "the Markdown export cannot be imported; export with --format jsonl"
    if first is None:
        return "it is not JSON: to add a text file, use `octomem ingest`"
    return "import reads only what `octomem export` writes"


def _decoded(lines: Iterable[str], source: str) -> Iterator[str]:
    """Yield ``lines``, turning a decoding error of the file behind them into one line."""
    iterator = iter(lines)
    number = 0
    while True:
        number += 1
        try:
            yield next(iterator)
        except StopIteration:
            return
        except UnicodeDecodeError as exc:
            bad = _undecodable_line(lines)
            where = f"{source}:{bad}: not UTF-8 text" if bad is not None else \
                f"{source}: not UTF-8 text near line {number}"
            raise OctomemError(f"{where} ({exc.reason})") from exc


def _undecodable_line(lines: Iterable[str]) -> int | None:
    """Return the 1-based number of the first line that is not UTF-8 in the file ``lines``
    was read from (a text file: its ``name``), or ``None``. The text reader decodes 8 KB
    blocks ahead of the lines it gives, so the line it failed at is not the bad one."""
    name = getattr(lines, "name", None)
    if not isinstance(name, str) or not os.path.isfile(name):
        return None
    with open(name, "rb") as raw:
        for number, line in enumerate(raw, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                return number
    return None


def write_document(pipeline: Pipeline, tx: Any, doc: Document, chunks: list[Chunk],
                   replace: bool) -> list[Chunk]:
    """Store ``doc`` with exactly these chunks (times, revisions kept) and index their words;
    with ``replace``, first delete the stored document of that id with its index entries
    and vectors. Runs inside the caller's transaction ``tx``.

    :returns: the stored chunks (their vectors are to be computed afterwards).
    """
    storage, keyword, semantic = pipeline.arms.storage, pipeline.arms.keyword, \
        pipeline.arms.semantic
    if replace:
        removed = storage.delete_document(tx, doc.id)
        if keyword is not None:
            keyword.remove(tx, removed)
        if semantic is not None:
            semantic.remove(tx, removed)
    new = storage.add_document(tx, doc, chunks)
    if keyword is not None:
        keyword.index(tx, new)
    return new


def import_lines(memory: Memory, lines: Iterable[str], source: str,
                 scope: str | None = None,
                 waiting: Callable[[], None] | None = None) -> ImportReport:
    """Import a JSONL export into ``scope`` (default: the scope named in its header).

    Every record and supersede link is checked before anything is written (a bad time, a
    malformed record or a link to nothing stores nothing). Then, in one write
    transaction (all or nothing), each document is added, replaced by a newer state, or
    left as stored: unchanged, older than what is stored, in conflict with it, or
    forgotten here (:mod:`.import_plan` has the rule); of the handoffs then current, the
    newest supersedes the others (:mod:`.handoffs`). The forget log is copied only
    into the scope it was exported from (another scope never held those statements).
    Vectors are computed afterwards, for every chunk of the scope without one (so the
    same import after an interrupted one embeds what that one left), once no ingest
    stores or embeds in the scope (:meth:`~octomem.engine.pipeline.Pipeline.embed_missing`;
    ``waiting`` is called before waiting for one), so no chunk is embedded twice.

    :raises ImportInterrupted: Ctrl-C while embedding, after the documents were stored.
    :raises OctomemError: a malformed file or record, or a broken supersede link (named
        with the file, line and field).
    """
    records = list(read_lines(lines, source))
    header = records[0][1] if records else {}
    target: ScopeName = check_scope(scope) or check_scope(header.get("scope")) or "local"
    same_scope = target == (check_scope(header.get("scope")) or target)
    timed = [(number, _epochs(obj, f"{source}:{number}")) for number, obj in records[1:]]
    incoming = [Incoming(number, *parse_document(obj, f"{source}:{number}"))
                for number, obj in timed if obj["type"] == "document"]
    forgets = [parse_forgotten(obj, f"{source}:{number}") for number, obj in timed
               if obj["type"] == "forgotten"]
    forgotten_in_file = {f.id for f in forgets}
    if not memory.scopes.exists(target):  # a refused file must not leave an empty store
        check_links(incoming, forgotten_in_file, None, source, target)
    pipeline = memory.scopes.require(target, create=True)
    storage = _storage(pipeline)
    report = ImportReport(target)
    stored: list[int] = []
    with pipeline.embedding(), storage.transaction() as tx:  # others: .embedding_lock
        check_links(incoming, forgotten_in_file, storage, source, target)
        todo = plan(storage, incoming, forgotten_in_file)
        for item in todo.write.values():
            (report.replaced if item.doc.id in todo.replaced else report.added).append(
                item.doc.id)
            stored += [c.id for c in write_document(pipeline, tx, item.doc, item.chunks,
                                                    replace=item.doc.id in todo.replaced)]
        report.unchanged, report.skipped_forgotten = todo.unchanged, todo.forgotten
        report.refused_tags = [(i.doc.id, why) for i in todo.write.values()
                               if (why := refused_tags(i.doc.tags, memory.settings.limits))]
        report.split_tags = [(i.doc.id, i.tags_split) for i in todo.write.values()
                             if i.tags_split]
        report.older, report.conflicts = todo.older, todo.conflicts
        _log_forgotten(pipeline, tx, forgets, same_scope, report)
        report.handoffs_superseded = keep_newest_handoff(storage, tx)
    semantic = pipeline.arms.semantic
    if semantic is not None and not pipeline.semantic_error and (
            stored or semantic.missing_count()):  # what an interrupted import left too
        try:
            report.embedded = pipeline.embed_missing(waiting=waiting)
        except (EmbedderUnavailableError, EmbedderMismatchError) as exc:
            report.semantic_error = str(exc)
        except KeyboardInterrupt as exc:  # the documents are stored: say so (trial 16 F25)
            raise ImportInterrupted(report) from exc
    return report


class ImportInterrupted(KeyboardInterrupt):
    """Ctrl-C while an import embedded its chunks: every document was stored (one
    transaction), some chunks have no vector yet; the same import again, or ``octomem
    reindex``, embeds them.

    :param report: what the import stored.
    """

    def __init__(self, report: ImportReport) -> None:
        super().__init__()
        self.report = report


def _log_forgotten(pipeline: Pipeline, tx: Any, forgets: list[ForgetRecord],
                   same_scope: bool, report: ImportReport) -> None:
    """Copy the file's forget-log entries into the scope's log (only into the scope the
    file was exported from), counting those already there. A deliberate forget
    (:func:`~.forget.is_tombstone`) of a document this scope still holds forgets it here
    too (trial 16 F20: a forget made on another machine arrives), as ``forget`` would:
    the document, its words and vectors go, what it superseded is handed on."""
    storage = pipeline.arms.storage
    for record in forgets:
        if not same_scope:
            report.forgotten_left += 1
            continue
        held = storage.get_document(record.id) if is_tombstone(record) else None
        if held is not None:
            remove(pipeline, tx, held, record)
            report.forgotten_here.append(record.id)
        elif storage.get_forgotten(record.id) == record:
            report.forgotten_known += 1  # imported before: not new
        else:
            storage.record_forgotten(tx, record)
            report.forgotten_logged += 1
