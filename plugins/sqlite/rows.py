"""Rows of the ``sqlite`` storage to and from :class:`Document` and :class:`Chunk` values.

The columns and codecs are the ones every storage of octomem's schema shares
(:mod:`octomem.engine.sql.rows`); SQLite hands JSON columns back as text.
"""

from __future__ import annotations

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
    "CHUNK_COLUMNS", "CHUNK_FIELDS", "DOC_COLUMNS", "chunk_of", "chunk_params", "content_hash",
    "document_of", "document_params", "dumps", "inherit",
]


def document_of(row: Sequence[Any]) -> Document:
    """Return the :class:`Document` of a row selected with :data:`DOC_COLUMNS`."""
    return Document(**row_fields(DOC_COLUMNS, row))


def chunk_of(row: Sequence[Any]) -> Chunk:
    """Return the :class:`Chunk` of a row selected with :data:`CHUNK_COLUMNS`."""
    return Chunk(**row_fields(CHUNK_COLUMNS, row))
