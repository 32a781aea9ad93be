"""The document records of a JSONL export, checked field by field before ``import`` stores
anything.

A record that lacks a field or holds a value of the wrong type is refused with the file,
the line and the field (``x.jsonl:2: a malformed document record: text: missing``), never
with Python's own words for it; so is a time octomem does not keep, and a kind that no
``kinds`` filter could select (not one word of ASCII letters, digits and ``_``: the rule
every octomem writer keeps; a kind in lower case is stored in capitals, as ``add`` does).
"""

from __future__ import annotations

from typing import Any

from ..controls import blank
from ..errors import OctomemError
from ..labels import relabelled
from ..types import DEFAULT_KIND, Chunk, Document, ForgetRecord
from .remember import kind_refusal, kind_within_rule
from .times import EARLIEST, LATEST, in_range

#: Fields of a document record that become :class:`~octomem.engine.types.Document` fields.
DOC_FIELDS = ("id", "text", "title", "uri", "kind", "tags", "created_at", "event_time",
              "metadata", "supersedes", "superseded_by", "valid_to", "revision", "recalls",
              "last_recalled_at")
#: Time fields of a document record: required (``created_at``) or nullable.
_TIMES = {"created_at": False, "event_time": True, "valid_to": True, "last_recalled_at": True}


class Malformed(ValueError):
    """One field of a record is missing or of the wrong type (``field: what is wrong``)."""


def _text(value: Any, name: str, *, nullable: bool = False, empty: bool = True) -> None:
    if value is None and nullable:
        return
    if not isinstance(value, str) or (not empty and not value):
        kind = "a string" if empty else "a non-empty string"
        raise Malformed(f"{name}: must be {kind}{' or null' if nullable else ''}, got {value!r}")


#: The largest integer SQLite stores (``INTEGER``: 64-bit signed); a larger ``revision`` or
#: ``recalls`` ended an import in a traceback, after its store was created (trial 15 F15).
MOST = 2**63 - 1


def _whole(value: Any, name: str, least: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= MOST:
        shown = repr(value) if not isinstance(value, int) or len(str(value)) <= 24 \
            else f"a number of {len(str(abs(value)))} digits"
        raise Malformed(f"{name}: must be a whole number from {least} to {MOST:,}, "
                        f"got {shown}")


def _check_fields(obj: dict[str, Any]) -> None:
    """Refuse a record a :class:`Document` cannot be made of, naming the field.

    :raises Malformed: the first field that is missing or of the wrong type.
    """
    for name in ("id", "text", "created_at"):
        if obj.get(name) is None:
            raise Malformed(f"{name}: missing")
    _text(obj["id"], "id", empty=False)
    _text(obj["text"], "text")
    if blank(obj["text"]):  # as remember, add and ingest refuse it (trial 13 F9)
        raise Malformed("text: empty; no octomem writer stores a document without text")
    _text(obj.get("kind", DEFAULT_KIND), "kind", empty=False)
    if (why := kind_refusal(obj.get("kind", DEFAULT_KIND))) is not None:
        raise Malformed(f"{why} ({_unreachable(obj['kind'])})")
    for name in ("title", "uri"):
        _text(obj.get(name), name, nullable=True)
    for name in ("supersedes", "superseded_by"):
        _text(obj.get(name), name, nullable=True, empty=False)
    tags = obj.get("tags")
    if tags is not None and (not isinstance(tags, list)
                             or not all(isinstance(t, str) for t in tags)):
        raise Malformed(f"tags: must be a list of strings, got {tags!r}")
    if not isinstance(obj.get("metadata") or {}, dict):
        raise Malformed(f"metadata: must be an object, got {obj['metadata']!r}")
    _whole(obj.get("revision", 1), "revision", 1)
    _whole(obj.get("recalls", 0), "recalls", 0)
    chunks = obj.get("chunks")
    if chunks is not None and not isinstance(chunks, list):
        raise Malformed(f"chunks: must be a list, got {chunks!r}")
    for i, chunk in enumerate(chunks or ()):
        if not isinstance(chunk, dict):
            raise Malformed(f"chunks[{i}]: must be an object, got {chunk!r}")
        for name in ("ordinal", "text", "revision", "valid_from"):
            if chunk.get(name) is None:
                raise Malformed(f"chunks[{i}].{name}: missing")
        _whole(chunk["ordinal"], f"chunks[{i}].ordinal", 0)
        _text(chunk["text"], f"chunks[{i}].text")
        _whole(chunk["revision"], f"chunks[{i}].revision", 1)


def _unreachable(kind: str) -> str:
    """Say why a kind outside the kind rule is refused, and a kind in the rule to give it
    (``to-do`` -> ``TO_DO``, ``Ünïcode_KIND`` -> ``UNICODE_KIND``)."""
    return ("octomem add and every kinds filter refuse such a kind, so no filter could ever "
            f"select this record; give it one that fits, e.g. {kind_within_rule(kind)}")


def _checked_times(obj: dict[str, Any], where: str) -> None:
    """Refuse a record whose times are not epoch seconds within the range octomem keeps.

    :raises OctomemError: naming ``where`` (file and line) and the field.
    """
    fields: list[tuple[str, Any, bool]] = [
        (name, obj.get(name), nullable) for name, nullable in _TIMES.items()
        if name in obj or not nullable]
    for i, chunk in enumerate(obj.get("chunks") or ()):
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


def parse_document(obj: dict[str, Any], where: str,
                   ) -> tuple[Document, list[Chunk], str | None]:
    """Return the document and chunks of a record whose times are epoch seconds already.

    The document's tags are made labels, as ``remember`` stores them (stripped, NFC, a
    tag holding a comma split: :func:`~octomem.engine.labels.relabelled`), so that
    ``recall``'s tags filter can match every one (trial 20 L12).

    :param where: ``file:line``, for the message.
    :returns: the document, its chunks (one chunk of its text when the record lists
        none) and what of its tags was split (for the import's report) or ``None``.
    :raises OctomemError: naming ``where`` and the field: a field missing or of the wrong
        type, or a time octomem does not keep.
    """
    try:
        _check_fields(obj)
    except Malformed as exc:
        raise OctomemError(f"{where}: a malformed document record: {exc}; nothing was "
                           "imported") from None
    _checked_times(obj, where)
    values = {name: obj[name] for name in DOC_FIELDS if obj.get(name) is not None}
    values["tags"], split = relabelled(values.get("tags") or ())
    if "kind" in values:  # stored in capitals, as add stores it: `fact` is filtered as FACT
        values["kind"] = values["kind"].upper()
    doc = Document(**values)
    chunks = [Chunk(document_id=doc.id, ordinal=c["ordinal"], text=c["text"],
                    revision=c["revision"], valid_from=float(c["valid_from"]),
                    valid_to=c.get("valid_to")) for c in obj.get("chunks") or ()]
    return (doc, chunks or [Chunk(document_id=doc.id, ordinal=0, text=doc.text)],
            "; ".join(split) or None)


def parse_forgotten(obj: dict[str, Any], where: str) -> ForgetRecord:
    """Return the forget-log entry of a record whose times are epoch seconds already.

    :raises OctomemError: naming ``where`` and the field that is missing or of the wrong
        type.
    """
    try:
        for name in ("id", "kind", "content_sha256"):
            if obj.get(name) is None:
                raise Malformed(f"{name}: missing")
            _text(obj[name], name, empty=False)
        _text(obj.get("reason"), "reason", nullable=True)
        for name in ("created_at", "forgotten_at"):
            value: Any = obj.get(name)
            if not in_range(value):
                raise Malformed(f"{name}: {value!r} is not a time octomem keeps")
    except Malformed as exc:
        raise OctomemError(f"{where}: a malformed forgotten record: {exc}; nothing was "
                           "imported") from None
    return ForgetRecord(obj["id"], obj["kind"], obj["content_sha256"], obj["created_at"],
                        obj["forgotten_at"], obj.get("reason"))
