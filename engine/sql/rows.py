"""The ``documents`` and ``chunks`` columns both storages share, and their row codecs.

A storage selects :data:`DOC_COLUMNS` / :data:`CHUNK_COLUMNS` and turns rows into
values with :func:`row_fields`; it writes :func:`document_params` /
:func:`chunk_params`. JSON columns (``tags``, ``metadata``) are written as JSON text
(sorted keys, UTF-8 kept); a driver that decodes them itself (psycopg's jsonb) passes
``decoded=True`` when reading.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from ..errors import OctomemError
from ..types import Chunk, Document, new_chunk

DOC_COLUMNS = (
    "id, text, title, uri, kind, tags, created_at, event_time, metadata, supersedes, "
    "superseded_by, valid_to, revision, recalls, last_recalled_at"
)
CHUNK_FIELDS = (
    "document_id, ordinal, text, kind, tags, created_at, title, uri, metadata, valid_from, "
    "valid_to, revision"
)
CHUNK_COLUMNS = "id, " + CHUNK_FIELDS
#: ``json.dumps(value, ensure_ascii=False, sort_keys=True)`` without building an encoder
#: per call (json.dumps does when given options: 6.5 -> 4.1 us a metadata dict)
_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True)
_ENCODE = _ENCODER.encode
#: The C encoder ``_ENCODE`` makes on every call (``JSONEncoder.iterencode``), made once,
#: with the same separators, string encoder, float and key handling, but without the
#: circular-reference check (``markers``: a dict per call); ``None`` without the C
#: accelerator. A metadata dict of the ingest benchmark: 4.5 -> 1.1 us.
_C_ENCODE = None if json.encoder.c_make_encoder is None else json.encoder.c_make_encoder(
    None, _ENCODER.default, json.encoder.encode_basestring, None, _ENCODER.key_separator,
    _ENCODER.item_separator, True, False, True)


def dumps(value: Any, what: str) -> str:
    """Serialise ``value`` (a list or a dict) as JSON (sorted keys, UTF-8 kept), as
    ``json.dumps(value, ensure_ascii=False, sort_keys=True)`` does.

    :raises OctomemError: naming ``what`` when it is not JSON-serialisable.
    """
    if not value and type(value) in (list, dict):  # most tags and metadata (as json writes)
        return "[]" if type(value) is list else "{}"
    try:
        if _C_ENCODE is not None and type(value) in (list, dict):
            try:
                return "".join(_C_ENCODE(value, 0))
            except RecursionError:  # a value that holds itself: _ENCODE says so
                pass
        return _ENCODE(value)
    except (TypeError, ValueError) as exc:
        raise OctomemError(f"{what} is not JSON-serialisable: {exc}") from exc


def row_fields(columns: str, row: Sequence[Any], decoded: bool = False) -> dict[str, Any]:
    """Map a ``documents``/``chunks`` row to constructor arguments.

    :param columns: the comma-separated columns the row was selected with.
    :param decoded: the driver already decoded the JSON columns (else they are JSON text).
    """
    values = dict(zip(columns.split(", "), row, strict=True))
    tags, metadata = values["tags"], values["metadata"]
    values["tags"] = tuple(tags if decoded else json.loads(tags))
    values["metadata"] = dict(metadata if decoded else json.loads(metadata))
    return values


def content_hash(text: str) -> str:
    """Return the sha256 hex digest of ``text`` (lone surrogates kept)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def document_params(document: Document, text: str | None = None) -> tuple[Any, ...]:
    """Return the values of :data:`DOC_COLUMNS` plus ``content_hash``, in order.

    :param text: the ``text`` column's value when not the document's (``content_hash`` is
        always the document's text's).
    :raises OctomemError: metadata or tags that are not JSON-serialisable.
    """
    tags, metadata = document.tags, document.metadata
    return (
        document.id, document.text if text is None else text, document.title, document.uri,
        document.kind, dumps(list(tags), "tags") if tags else "[]", float(document.created_at),
        document.event_time,
        dumps(metadata if type(metadata) is dict else dict(metadata),
              f"metadata of document {document.id!r}"),
        document.supersedes, document.superseded_by, document.valid_to, int(document.revision),
        int(document.recalls), document.last_recalled_at, content_hash(document.text),
    )


def inherit(chunk: Chunk, document: Document) -> Chunk:
    """Copy the document's filterable fields onto ``chunk`` (chunk title/uri win if set).

    A chunk of an earlier revision (``0 < chunk.revision < document.revision``, as an
    import restores it) keeps its own ``valid_from``/``valid_to``; every other chunk
    takes the document's validity and revision.
    """
    # built whole rather than with dataclasses.replace (~3x slower; 10k chunks: 0.4 s), by
    # new_chunk (every field in order, slots set directly: ~1.6x faster than Chunk(...))
    if 0 < chunk.revision < document.revision:  # retired: keeps its own validity
        valid_from, valid_to, revision = chunk.valid_from, chunk.valid_to, chunk.revision
    else:
        valid_from, valid_to, revision = document.valid_from, document.valid_to, \
            document.revision
    return new_chunk(
        document.id, chunk.ordinal, chunk.text, chunk.id, document.kind, tuple(document.tags),
        document.created_at, chunk.title or document.title, chunk.uri or document.uri,
        {**document.metadata, **chunk.metadata}, valid_from, valid_to, revision)


def chunk_params(
    chunk: Chunk, tags_json: str | None = None, metadata_json: str | None = None
) -> tuple[Any, ...]:
    """Return the values of :data:`CHUNK_FIELDS`, in order.

    :param tags_json: the JSON of ``chunk.tags`` when already made (e.g. its document's).
    :param metadata_json: the JSON of ``chunk.metadata`` when already made.
    :raises OctomemError: metadata or tags that are not JSON-serialisable.
    """
    return (
        chunk.document_id, chunk.ordinal, chunk.text, chunk.kind,
        dumps(list(chunk.tags), "tags") if tags_json is None else tags_json,
        float(chunk.created_at), chunk.title, chunk.uri,
        dumps(dict(chunk.metadata), "chunk metadata") if metadata_json is None else metadata_json,
        float(chunk.valid_from), chunk.valid_to, int(chunk.revision),
    )
