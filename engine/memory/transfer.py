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
import embeds again, outside the write transactions. Importing skips documents the
target scope has forgotten, so an old export never brings a forgotten statement back.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import IO, Any

from ..arms import VersionedStorage
from ..errors import (
    EmbedderMismatchError,
    EmbedderUnavailableError,
    OctomemError,
    UsageValueError,
)
from ..pipeline import DOCS_PER_TRANSACTION, Pipeline
from ..types import Chunk, Document, ForgetRecord
from .exact_times import exact_epoch, exact_iso
from .facade import Memory
from .forget import was_forgotten
from .markdown import MARKDOWN_TITLE, render_markdown
from .scopes import ScopeName, check_scope
from .times import EARLIEST, LATEST, in_range, iso
from .transcripts import CLAUDE_TYPES

FORMAT = 2
#: Export formats ``import`` reads: 1 wrote times as epoch seconds, 2 as ISO-8601.
READABLE_FORMATS = (1, 2)
#: Time fields of each record type (``chunks`` entries: ``valid_from``, ``valid_to``).
_TIME_FIELDS = {"document": ("created_at", "event_time", "valid_to", "last_recalled_at"),
                "forgotten": ("created_at", "forgotten_at")}
_DOC_FIELDS = ("id", "text", "title", "uri", "kind", "tags", "created_at", "event_time",
               "metadata", "supersedes", "superseded_by", "valid_to", "revision", "recalls",
               "last_recalled_at")


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
        out.write(render_markdown(chosen, str(memory.roots.of(chosen)), current,
                                  [d for d in everything if not d.is_current], warnings,
                                  snippet=None))
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
    """

    scope: str
    added: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    skipped_forgotten: list[str] = field(default_factory=list)
    forgotten_logged: int = 0
    forgotten_left: int = 0
    forgotten_known: int = 0
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
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            if not seen_header:
                obj = None
            else:
                raise OctomemError(f"{source}:{number}: not valid JSON: {exc.msg}") from exc
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
            raise OctomemError(
                f"{source}: not UTF-8 text near line {number} ({exc.reason})") from exc


#: Time fields of a document record: required (``created_at``) or nullable.
_TIMES = {"created_at": False, "event_time": True, "valid_to": True, "last_recalled_at": True}


def _checked_times(obj: dict[str, Any], where: str) -> None:
    """Refuse a record whose times are not epoch seconds within the range octomem keeps.

    :raises OctomemError: naming ``where`` (file and line) and the field.
    """
    fields = [(name, obj.get(name), nullable) for name, nullable in _TIMES.items()
              if name in obj or not nullable]
    for i, chunk in enumerate(obj.get("chunks") or ()):
        if isinstance(chunk, dict):
            fields += [(f"chunks[{i}].valid_from", chunk.get("valid_from"), False),
                       (f"chunks[{i}].valid_to", chunk.get("valid_to"), True)]
    for name, value, nullable in fields:
        if value is None and nullable:
            continue
        if not in_range(value):
            raise OctomemError(
                f"{where}: {name}: {value!r} is not a time octomem keeps (epoch seconds from "
                f"{EARLIEST:.0f} to {LATEST:.0f}, i.e. 0001-01-02T00:00Z up to "
                "9999-12-31T00:00Z); nothing "
                "was imported")


def _document(obj: dict[str, Any], where: str) -> tuple[Document, list[Chunk]]:
    try:
        values = {name: obj[name] for name in _DOC_FIELDS if name in obj}
        values["tags"] = tuple(values.get("tags") or ())
        doc = Document(**values)
        chunks = [Chunk(document_id=doc.id, ordinal=int(c["ordinal"]), text=str(c["text"]),
                        revision=int(c["revision"]), valid_from=float(c["valid_from"]),
                        valid_to=c.get("valid_to")) for c in obj.get("chunks") or ()]
    except (KeyError, TypeError, ValueError) as exc:
        raise OctomemError(f"{where}: a malformed document record ({exc})") from exc
    _checked_times(obj, where)
    return doc, chunks or [Chunk(document_id=doc.id, ordinal=0, text=doc.text)]


#: A document's usage counts: what recalls in a store changed, never its content.
USAGE_FIELDS = ("recalls", "last_recalled_at")


def same_but_usage(old: Document | None, doc: Document) -> bool:
    """Return whether the stored ``old`` and the imported ``doc`` differ only in
    :data:`USAGE_FIELDS`: the store's recalls since (or before) the export, not another
    document. Replacing it made a new revision and re-embedded its chunks, and the
    import after a recall in the store reported "replaced" (trial 10); the store keeps
    its own counts."""
    if old is None:
        return False
    return dataclasses.replace(old, **{f: getattr(doc, f) for f in USAGE_FIELDS}) == doc


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
                 scope: str | None = None) -> ImportReport:
    """Import a JSONL export into ``scope`` (default: the scope named in its header).

    Every record is checked before anything is written (a bad time or a malformed record
    stores nothing). Documents are written with their ids, kinds, tags, times, supersede
    links and recall counts, :data:`~.pipeline.DOCS_PER_TRANSACTION` per transaction; an
    existing identical document is left alone, a different one replaced; documents the
    target scope has forgotten are skipped. The forget log is copied only into the scope
    it was exported from (another scope never held those statements). Vectors are
    computed afterwards.

    :raises OctomemError: a malformed file (named with the line).
    """
    records = list(read_lines(lines, source))
    header = records[0][1] if records else {}
    target: ScopeName = check_scope(scope) or check_scope(header.get("scope")) or "local"
    same_scope = target == (check_scope(header.get("scope")) or target)
    timed = [(number, _epochs(obj, f"{source}:{number}")) for number, obj in records[1:]]
    body = [(number, obj, None if obj["type"] == "forgotten" else
             _document(obj, f"{source}:{number}")) for number, obj in timed]
    pipeline = memory.scopes.require(target, create=True)
    storage = _storage(pipeline)
    report = ImportReport(target)
    stored: list[int] = []
    for start in range(0, len(body), DOCS_PER_TRANSACTION):
        with storage.transaction() as tx:
            for _, obj, parsed in body[start:start + DOCS_PER_TRANSACTION]:
                if parsed is None:
                    if not same_scope:
                        report.forgotten_left += 1
                        continue
                    record = ForgetRecord(**{k: obj[k] for k in (
                        "id", "kind", "content_sha256", "created_at", "forgotten_at", "reason")})
                    if storage.get_forgotten(record.id) == record:
                        report.forgotten_known += 1  # imported before: not new
                        continue
                    storage.record_forgotten(tx, record)
                    report.forgotten_logged += 1
                    continue
                doc, chunks = parsed
                if was_forgotten(storage, doc.id):
                    report.skipped_forgotten.append(doc.id)
                    continue
                old = storage.get_document(doc.id)
                if old == doc or same_but_usage(old, doc):
                    report.unchanged.append(doc.id)
                    continue
                (report.replaced if old is not None else report.added).append(doc.id)
                new = write_document(pipeline, tx, doc, chunks, replace=old is not None)
                stored.extend(c.id for c in new)
    if stored and pipeline.arms.semantic is not None and not pipeline.semantic_error:
        try:
            report.embedded = pipeline.embed_pending(chunk_ids=stored)
        except (EmbedderUnavailableError, EmbedderMismatchError) as exc:
            report.semantic_error = str(exc)
    return report
