"""Statement history, usage counters and the forget log of the ``postgres`` storage.

Mixed into :class:`~octomem_postgres.storage.PostgresStorage`; these are the optional
methods of :class:`~octomem.engine.arms.VersionedStorage`, with the same semantics as
the ``sqlite`` storage's and the same SQL (:class:`octomem.engine.sql.SqlHistory`).
Every write takes the caller's transaction ``tx``.
"""

from __future__ import annotations

from octomem.engine.sql import SqlHistory

from .filters import POSTGRES
from .rows import CHUNK_COLUMNS, DOC_COLUMNS, chunk_of, document_of


class PostgresHistory(SqlHistory):
    """Supersede links, validity, recall counters and the forget log (PostgreSQL dialect)."""

    dialect = POSTGRES
    chunk_columns = CHUNK_COLUMNS
    doc_columns = DOC_COLUMNS
    chunk_of = staticmethod(chunk_of)
    document_of = staticmethod(document_of)
