"""Statement history, usage counters and the forget log of the ``sqlite`` storage.

Mixed into :class:`~octomem.plugins.sqlite.storage.SqliteStorage`; these are the
optional methods of :class:`~octomem.engine.arms.VersionedStorage`, in the SQL they share
with the ``postgres`` plugin (:class:`octomem.engine.sql.SqlHistory`). Every write takes
the caller's transaction ``tx``.
"""

from __future__ import annotations

from octomem.engine.sql import SqlHistory

from .filters import SQLITE
from .rows import CHUNK_COLUMNS, DOC_SELECT, chunk_of, document_of


class SqliteHistory(SqlHistory):
    """Supersede links, validity, recall counters and the forget log (SQLite dialect)."""

    dialect = SQLITE
    chunk_columns = CHUNK_COLUMNS
    doc_columns = DOC_SELECT
    chunk_of = staticmethod(chunk_of)
    document_of = staticmethod(document_of)
