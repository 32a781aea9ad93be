"""Rows of the ``sqlite`` storage to and from :class:`Document` and :class:`Chunk` values.

The columns and codecs are the ones every storage of octomem's schema shares
(:mod:`octomem.engine.sql.rows`); SQLite hands JSON columns back as text.

One copy of the text (schema version 3): a document stored as one chunk whose text is the
document's own keeps it in ``chunks`` only; its ``documents.text`` is ``''`` (never a
document's text: empty text is refused), and :data:`DOC_SELECT` reads it back from that
chunk (ordinal 0 of the document's current revision). Rows written before version 3 hold
the text in both tables and read the same.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from octomem.engine.sql.rows import (
    CHUNK_COLUMNS,
    CHUNK_FIELDS,
    DOC_COLUMNS,
    chunk_params,
    content_hash,
    document_params,
    dumps,
    inherit,
    row_fields,
)
from octomem.engine.types import Chunk, Document

__all__ = [
    "CHUNK_COLUMNS", "CHUNK_FIELDS", "DOC_COLUMNS", "DOC_SELECT", "chunk_of", "chunk_params",
    "content_hash", "document_of", "document_params", "dumps", "inherit", "stored_params",
]

#: ``documents.text`` as read: the text of the document's one chunk when the row keeps
#: none (``''``; still ``''`` without a chunk), else its own (``documents`` must not be
#: aliased in the query).
DOC_TEXT = (
    "CASE WHEN documents.text = '' THEN coalesce((SELECT c.text FROM chunks AS c WHERE "
    "c.document_id = documents.id AND c.ordinal = 0 AND c.revision = documents.revision "
    "LIMIT 1), '') ELSE documents.text END"
)
#: :data:`DOC_COLUMNS` as a ``SELECT ... FROM documents`` list, ``text`` read by
#: :data:`DOC_TEXT`; the same columns in the same order.
DOC_SELECT = DOC_COLUMNS.replace("id, text,", f"id, {DOC_TEXT},", 1)


def stored_params(document: Document, chunks: Sequence[Chunk]) -> tuple[Any, ...]:
    """Return :func:`document_params` as the ``documents`` row stores them: the text left
    out (``''``) when the document is stored as one chunk of its current revision holding
    exactly its text (the chunk keeps it).

    :raises OctomemError: metadata or tags that are not JSON-serialisable.
    """
    if len(chunks) == 1:
        chunk = chunks[0]
        if chunk.text == document.text and chunk.ordinal == 0 and not (
                0 < chunk.revision < document.revision):
            return document_params(document, "")
    return document_params(document)


def document_of(row: Sequence[Any]) -> Document:
    """Return the :class:`Document` of a row selected with :data:`DOC_COLUMNS`."""
    return Document(**row_fields(DOC_COLUMNS, row))


_COLUMNS = CHUNK_COLUMNS.split(", ")
#: Each column's slot setter on :class:`Chunk` (every field is a column: checked here).
_SETTERS = tuple(getattr(Chunk, name).__set__ for name in _COLUMNS)
if set(_COLUMNS) != set(Chunk.__dataclass_fields__):
    raise ImportError(f"CHUNK_COLUMNS {_COLUMNS} are not Chunk's fields")
_TAGS, _METADATA = _COLUMNS.index("tags"), _COLUMNS.index("metadata")
_new_chunk = object.__new__


def chunk_of(row: Sequence[Any]) -> Chunk:
    """Return the :class:`Chunk` of a row selected with :data:`CHUNK_COLUMNS`:
    ``Chunk(**row_fields(CHUNK_COLUMNS, row))``, an equal object made by setting each slot
    (the frozen dataclass's ``__init__`` makes 13 ``object.__setattr__`` calls) and without
    decoding the JSON of no tags or no metadata: 5 against 12 us per SciFact chunk (load
    12), ~20 per search (``tests/test_sqlite_rows.py``)."""
    chunk = _new_chunk(Chunk)
    for setter, value in zip(_SETTERS, row, strict=True):
        setter(chunk, value)
    tags, metadata = row[_TAGS], row[_METADATA]
    _SETTERS[_TAGS](chunk, () if tags == "[]" else tuple(json.loads(tags)))
    _SETTERS[_METADATA](chunk, {} if metadata == "{}" else dict(json.loads(metadata)))
    return chunk
