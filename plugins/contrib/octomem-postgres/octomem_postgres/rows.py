"""Rows of the ``postgres`` storage to and from :class:`Document` and :class:`Chunk` values.

The columns and codecs are the ones every storage of octomem's schema shares
(:mod:`octomem.engine.sql.rows`); what is PostgreSQL's own is here: the placeholders
that cast JSON columns to ``jsonb``, psycopg's already-decoded jsonb on reading, and
the refusal of NUL characters, which PostgreSQL ``text`` cannot hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from octomem.engine.errors import OctomemError
from octomem.engine.sql import rows as shared
from octomem.engine.sql.rows import (
    CHUNK_COLUMNS,
    CHUNK_FIELDS,
    DOC_COLUMNS,
    content_hash,
    inherit,
    row_fields,
)
from octomem.engine.types import Chunk, Document

__all__ = [
    "CHUNK_COLUMNS", "CHUNK_FIELDS", "CHUNK_VALUES", "DOC_COLUMNS", "DOC_VALUES", "chunk_of",
    "chunk_params", "check_text", "content_hash", "document_of", "document_params", "inherit",
    "qualified",
]

#: Placeholders of :data:`DOC_COLUMNS` plus ``content_hash`` (JSON columns cast to jsonb).
DOC_VALUES = "%s, %s, %s, %s, %s, %s::jsonb, %s, %s, %s::jsonb, %s, %s, %s, %s, %s, %s, %s"
CHUNK_VALUES = "%s, %s, %s, %s, %s::jsonb, %s, %s, %s, %s::jsonb, %s, %s, %s"


def qualified(columns: str, alias: str) -> str:
    """Return ``columns`` (comma-separated) each prefixed with ``alias.``."""
    return ", ".join(f"{alias}.{c}" for c in columns.split(", "))


def document_of(row: Sequence[Any]) -> Document:
    """Return the :class:`Document` of a row selected with :data:`DOC_COLUMNS`."""
    return Document(**row_fields(DOC_COLUMNS, row, decoded=True))


def chunk_of(row: Sequence[Any]) -> Chunk:
    """Return the :class:`Chunk` of a row selected with :data:`CHUNK_COLUMNS`."""
    return Chunk(**row_fields(CHUNK_COLUMNS, row, decoded=True))


def check_text(value: str | None, what: str) -> None:
    """Refuse text PostgreSQL cannot store.

    :raises OctomemError: ``value`` holds a NUL character, naming ``what``.
    """
    if value is not None and "\x00" in value:
        raise OctomemError(f"{what} contains a NUL character, which PostgreSQL text cannot hold")


def document_params(document: Document) -> tuple[Any, ...]:
    """Return the values of :data:`DOC_COLUMNS` plus ``content_hash``, in order.

    :raises OctomemError: text PostgreSQL cannot store, or metadata that is not JSON.
    """
    for value, what in ((document.text, "text"), (document.title, "title"),
                        (document.uri, "uri"), (document.id, "id")):
        check_text(value, f"the {what} of document {document.id!r}")
    return shared.document_params(document)


def chunk_params(chunk: Chunk) -> tuple[Any, ...]:
    """Return the values of :data:`CHUNK_FIELDS`, in order.

    :raises OctomemError: text PostgreSQL cannot store, or metadata that is not JSON.
    """
    check_text(chunk.text, f"a chunk of document {chunk.document_id!r}")
    return shared.chunk_params(chunk)
