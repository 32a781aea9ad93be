"""Dialect-neutral SQL shared by the storage plugins: filters, rows and statement history.

The ``sqlite`` storage and the ``postgres`` plugin keep the same ``documents``,
``chunks`` and ``forgotten`` tables and must answer :class:`~octomem.engine.types.Filters`
and the history methods of :class:`~octomem.engine.arms.VersionedStorage` identically.
What is the same SQL in both lives here once; a :class:`SqlDialect` supplies what
differs (placeholders, the scalar maximum, list membership, JSON access to tags and
metadata). Statements are written with ``?`` placeholders and rewritten by
:meth:`SqlDialect.q` for drivers that use another style (psycopg's ``%s``).

- :mod:`.filters` — :class:`~.filters.SqlDialect` and :func:`~.filters.filter_sql`;
- :mod:`.rows` — the ``documents``/``chunks`` columns and row codecs;
- :mod:`.history` — :class:`~.history.SqlHistory`, the versioned-storage methods.
"""

from __future__ import annotations

from .filters import SqlDialect, filter_sql, validity_sql
from .history import SqlHistory

__all__ = ["SqlDialect", "SqlHistory", "filter_sql", "validity_sql"]
