"""What ``octomem import`` does with each document of an export: the newer state wins,
and nothing stored is destroyed.

A stored document only moves forward: its revision grows with every changed ingest, and
once superseded it stays superseded (``superseded_by``, ``valid_to``). So of a stored
document and the file's record of the same id, the newer is the one further along on
both: a higher or equal revision *and* superseded if the other is. Then:

- **added**: the id is not stored (nor forgotten here as a statement, see
  :func:`~.forget.was_forgotten`: then it is skipped);
- **unchanged**: the same, recall counts aside (this store keeps its own), and the time
  it was stored aside when nothing else differs: the same transcript or text ingested in
  two stores has the same id, text, chunks, metadata and validity, only its
  ``created_at`` (the ingest time) differs (trial 12). ``created_at`` counts only where it
  is the time the document is valid from (no ``event_time``);
- **replaced**: the file's record is newer, and it continues what is stored: its chunks
  of the stored revision are the stored ones (same text), or, at the same revision, only
  the supersede is new. The stored history is part of the file's, so nothing is lost;
- **older**: the stored document is further along (a later revision, or superseded
  since). It is kept as it is: what the file holds of it is already its history;
- **conflict**: neither is further along on both (the same revision with other content,
  a later revision here and a supersede in the file, revisions that changed the same
  revision differently, or superseded by two different statements). The stored one is
  kept, the file's left out, and the summary names the id and why.

Supersede links are checked before anything is written, and a file that breaks them is
refused whole (file, line and field named): ``superseded_by`` needs ``valid_to``; each
linked id must be a document of the file, of the scope, or in a forget log (the file's
or the scope's); a statement that ``supersedes`` another of the file must be its
``superseded_by``. A record written by the import whose link would end one-way against
what stays stored (it supersedes a statement kept current or superseded by another) is
left out as a conflict, and so is, in turn, any that needs it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from ..errors import OctomemError
from ..types import Chunk, Document
from .forget import was_forgotten

Outcome = Literal["added", "replaced", "unchanged", "older", "conflict"]

#: A document's usage counts: what recalls in a store changed, never its content.
USAGE_FIELDS = ("recalls", "last_recalled_at")
#: The fields compared for "the same content", in the order a conflict names them
#: (``created_at`` only through :attr:`~..types.Document.valid_from`: :func:`differing`).
CONTENT_FIELDS = ("text", "title", "uri", "kind", "tags", "event_time", "metadata",
                  "supersedes", "superseded_by", "valid_to", "revision")


@dataclass(frozen=True, slots=True)
class Incoming:
    """One document record of the file: its line, the document and its chunks, and what
    of its tags was split (``None``: nothing; :mod:`..labels`)."""

    line: int
    doc: Document
    chunks: list[Chunk]
    tags_split: str | None = None


@dataclass(slots=True)
class Plan:
    """What the import will do, by document id (file order kept)."""

    write: dict[str, Incoming] = field(default_factory=dict)
    replaced: set[str] = field(default_factory=set)
    unchanged: list[str] = field(default_factory=list)
    older: list[tuple[str, str]] = field(default_factory=list)
    conflicts: list[tuple[str, str]] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)


def same_but_usage(old: Document | None, doc: Document) -> bool:
    """Return whether the stored ``old`` and the imported ``doc`` differ only in
    :data:`USAGE_FIELDS`: the store's recalls since (or before) the export, not another
    document. Replacing it made a new revision and re-embedded its chunks, and the
    import after a recall in the store reported "replaced" (trial 10); the store keeps
    its own counts."""
    if old is None:
        return False
    return dataclasses.replace(old, **{f: getattr(doc, f) for f in USAGE_FIELDS}) == doc


def differing(old: Document, doc: Document, ignore: tuple[str, ...] = ()) -> list[str]:
    """Return the names of the content fields in which ``old`` and ``doc`` differ
    (:data:`CONTENT_FIELDS` less ``ignore``), ``created_at`` last when it changes the time
    the document is valid from; recall counts and the time it was stored never count."""
    names = [f for f in CONTENT_FIELDS if f not in ignore and getattr(old, f) != getattr(doc, f)]
    if old.valid_from != doc.valid_from and "event_time" not in names:
        names.append("created_at")
    return names


def _same_chunks(old: Document, stored: Callable[[], list[Chunk]],
                 chunks: list[Chunk]) -> bool:
    """Return whether the stored chunks of ``old``'s revision have the texts of the file's."""
    return _texts(stored(), old.revision, old.revision) == _texts(chunks, old.revision,
                                                                  old.revision)


def _other_content(old: Document, stored: Callable[[], list[Chunk]], doc: Document,
                   chunks: list[Chunk], ignore: tuple[str, ...] = ()) -> str | None:
    """Say in which fields (or chunks) revision ``old.revision`` differs here and in the
    file, or ``None`` when it does not."""
    names = differing(old, doc, ignore)
    if not names and not _same_chunks(old, stored, chunks):
        names = ["chunks"]
    return (f"revision {old.revision} here differs from the file's in "
            f"{', '.join(names)}") if names else None


def _differ(old: Document, doc: Document) -> str:
    """Say how the stored ``old`` and the file's ``doc`` differ in revision and supersede."""
    parts = []
    if old.revision != doc.revision:
        parts.append(f"revision {old.revision} is stored, the file has revision {doc.revision}")
    if old.is_current != doc.is_current:
        parts.append(f"superseded here by {old.superseded_by!r}, current in the file"
                     if doc.is_current else
                     f"current here, superseded in the file by {doc.superseded_by!r}")
    return "; ".join(parts)


def _texts(chunks: list[Chunk], revision: int, current: int) -> list[str]:
    """The texts of the chunks of ``revision``, by ordinal (a chunk's revision 0 is
    ``current``, the document's)."""
    return [c.text for c in sorted(chunks, key=lambda c: c.ordinal)
            if (c.revision or current) == revision]


def _continues(old: Document, stored: Callable[[], list[Chunk]], doc: Document,
               chunks: list[Chunk]) -> str | None:
    """Return why ``doc`` (further along than ``old``) does not continue it, or ``None``
    when the stored state is part of the file's history."""
    if not old.is_current and old.superseded_by != doc.superseded_by:
        return f"superseded by {old.superseded_by!r} here, by {doc.superseded_by!r} in the file"
    if doc.revision == old.revision:
        return _other_content(old, stored, doc, chunks, ("superseded_by", "valid_to"))
    if _texts(stored(), old.revision, old.revision) != _texts(chunks, old.revision,
                                                              doc.revision):
        return (f"revision {old.revision} here is not the file's revision {old.revision} "
                f"(the file has revision {doc.revision}): both changed it, differently")
    return None


def judge(old: Document | None, stored: Callable[[], list[Chunk]], doc: Document,
          chunks: list[Chunk]) -> tuple[Outcome, str]:
    """Return what to do with the file's ``doc`` given the stored ``old`` (see the module
    docstring) and why, for ``older`` and ``conflict``.

    :param stored: returns every stored chunk of ``old`` (called only when needed).
    """
    if old is None:
        return "added", ""
    if old == doc or same_but_usage(old, doc) or (
            not differing(old, doc) and _same_chunks(old, stored, chunks)):
        return "unchanged", ""
    rev = (doc.revision > old.revision) - (doc.revision < old.revision)
    sup = (not doc.is_current) - (not old.is_current)
    if rev <= 0 and sup <= 0 and (rev or sup):
        return "older", _differ(old, doc)
    if rev >= 0 and sup >= 0 and (rev or sup):
        why = _continues(old, stored, doc, chunks)
        return ("replaced", "") if why is None else ("conflict", why)
    if rev == 0 and sup == 0:
        return "conflict", _continues(old, stored, doc, chunks) or _other_content(
            old, stored, doc, chunks) or f"revision {old.revision} differs here and in the file"
    return "conflict", _differ(old, doc)


def check_links(incoming: list[Incoming], forgotten_in_file: set[str], storage: Any,
                source: str, scope: str) -> None:
    """Refuse a file whose supersede links do not hold (see the module docstring).

    :param storage: the scope's storage; ``None`` when the scope has no store yet (then
        only the file's own ids and forget records are known).
    :raises OctomemError: naming ``source``, the line and the field; nothing is imported.
    """
    by_id: dict[str, Incoming] = {}
    for item in incoming:
        if (twin := by_id.get(item.doc.id)) is not None:
            _refuse(source, item, "id", f"{item.doc.id!r} is also the id on line {twin.line}")
        by_id[item.doc.id] = item

    def known(target: str) -> bool:
        return (target in by_id or target in forgotten_in_file
                or (storage is not None and storage.get_document(target) is not None)
                or (storage is not None and storage.get_forgotten(target) is not None))

    for item in incoming:
        doc = item.doc
        if doc.superseded_by is not None and doc.valid_to is None:
            _refuse(source, item, "superseded_by", f"{doc.superseded_by!r} is given but "
                    "valid_to is null (a superseded statement needs when it stopped being "
                    "current)")
        for name in ("supersedes", "superseded_by"):
            target = getattr(doc, name)
            if target == doc.id:
                _refuse(source, item, name, "the document's own id")
            if target is not None and not known(target):
                _refuse(source, item, name, f"no document has the id {target!r} (not in "
                        f"this file, the {scope} scope or a forget log)")
        if (old := by_id.get(doc.supersedes or "")) and old.doc.superseded_by != doc.id:
            _refuse(source, item, "supersedes", f"{old.doc.id!r} (line {old.line}) is not "
                    f"superseded by {doc.id!r}")
        new = by_id.get(doc.superseded_by or "")
        if new is not None and new.doc.supersedes not in (None, doc.id):
            _refuse(source, item, "superseded_by", f"{new.doc.id!r} (line {new.line}) "
                    f"supersedes {new.doc.supersedes!r}, not {doc.id!r}")
        if (cycle := _cycle(doc.id, by_id)) is not None:  # trial 15 F16: none stays current
            _refuse(source, item, "superseded_by", f"a supersede cycle ({' -> '.join(cycle)}): "
                    "no statement of it would be current")


def _cycle(start: str, by_id: dict[str, Incoming]) -> list[str] | None:
    """Return the ids from ``start`` along ``superseded_by`` back to ``start`` when the
    file's records make a cycle there, else ``None``."""
    path, seen = [start], {start}
    target = by_id[start].doc.superseded_by
    while target is not None and target in by_id:
        if target == start:
            return [*path, start]
        if target in seen:
            return None  # a cycle further on: refused at its own records
        path.append(target)
        seen.add(target)
        target = by_id[target].doc.superseded_by
    return None


def _refuse(source: str, item: Incoming, name: str, why: str) -> None:
    raise OctomemError(f"{source}:{item.line}: {name}: {why}; nothing was imported")


def plan(storage: Any, incoming: list[Incoming], forgotten_in_file: set[str]) -> Plan:
    """Decide, against what ``storage`` holds now, what to do with every record (call
    inside the import's write transaction)."""
    out = Plan()
    for item in incoming:
        doc_id = item.doc.id
        if was_forgotten(storage, doc_id):
            out.forgotten.append(doc_id)
            continue
        old = storage.get_document(doc_id)
        outcome, why = judge(old, partial(storage.document_chunks, doc_id), item.doc,
                             item.chunks)
        if outcome in ("added", "replaced"):
            out.write[doc_id] = item
            if outcome == "replaced":
                out.replaced.add(doc_id)
        elif outcome == "unchanged":
            out.unchanged.append(doc_id)
        else:
            (out.older if outcome == "older" else out.conflicts).append((doc_id, why))
    _leave_out_broken_links(storage, out, forgotten_in_file)
    return out


def _leave_out_broken_links(storage: Any, out: Plan, forgotten_in_file: set[str]) -> None:
    """Move to the conflicts each record to write whose supersede link would not hold
    against the final state, until none is left (one left out may break another's)."""
    def final(doc_id: str) -> Document | None:
        item = out.write.get(doc_id)
        return item.doc if item is not None else storage.get_document(doc_id)

    def gone(doc_id: str) -> bool:
        return doc_id in forgotten_in_file or storage.get_forgotten(doc_id) is not None

    changed = True
    while changed:
        changed = False
        for doc_id, item in list(out.write.items()):
            why = _broken_link(item.doc, final, gone)
            if why is not None:
                del out.write[doc_id]
                out.replaced.discard(doc_id)
                out.conflicts.append((doc_id, why))
                changed = True


def _broken_link(doc: Document, final: Callable[[str], Document | None],
                 gone: Callable[[str], bool]) -> str | None:
    if doc.supersedes is not None:
        old = final(doc.supersedes)
        if old is None and not gone(doc.supersedes):
            return f"it supersedes {doc.supersedes!r}, which this import leaves out"
        if old is not None and old.superseded_by != doc.id:
            now = "current" if old.is_current else f"superseded by {old.superseded_by!r}"
            return f"it supersedes {doc.supersedes!r}, which is {now} here"
    if doc.superseded_by is not None:
        new = final(doc.superseded_by)
        if new is None and not gone(doc.superseded_by):
            return f"superseded by {doc.superseded_by!r}, which this import leaves out"
        if new is not None and new.supersedes not in (None, doc.id):
            return f"superseded by {doc.superseded_by!r}, which supersedes " \
                   f"{new.supersedes!r} here"
    return None
