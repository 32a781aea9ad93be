"""SQL for :class:`~octomem.engine.types.Filters` over ``chunks`` of the ``sqlite`` storage.

The SQLite dialect of :mod:`octomem.engine.sql` (which the ``postgres`` plugin shares):
tags through ``json_each``, metadata through ``json_extract``.

The ``fts5`` and ``sqlite-vec`` arms put this fragment inside their own search
statements, so every filter applies before ranking and ``LIMIT``. It must agree with
:meth:`Filters.matches <octomem.engine.types.Filters.matches>` row for row (the storage
contract suite checks that).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from octomem.engine import sql
from octomem.engine.types import Filters

# ``metadata[key] == value`` compared as Python's ``str(value)`` would render it, so SQL
# agrees with :meth:`Filters.matches` for strings, integers, floats and booleans.
_METADATA_SQL = (
    "(CASE json_type({a}.metadata, ?) WHEN 'true' THEN 'True' WHEN 'false' THEN 'False' "
    "ELSE CAST(json_extract({a}.metadata, ?) AS TEXT) END) = ?"
)


def json_path(key: str) -> str:
    """Return the SQLite JSON path selecting the top-level member ``key`` (any characters)."""
    return '$."' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


class SqliteDialect(sql.SqlDialect):
    """SQLite: ``?`` placeholders, scalar ``max``, JSON through ``json_each``/``json_extract``."""

    def tags_sql(self, alias: str, tags: Sequence[str]) -> tuple[list[str], list[Any]]:
        """One ``EXISTS`` over ``json_each(tags)`` per tag."""
        clause = f"EXISTS (SELECT 1 FROM json_each({alias}.tags) AS t WHERE t.value = ?)"
        return [clause] * len(tags), list(tags)

    def metadata_sql(self, alias: str, key: str, value: str) -> tuple[str, list[Any]]:
        """``json_extract(metadata, '$."key"')`` rendered as Python renders the value."""
        return _METADATA_SQL.format(a=alias), [json_path(key), json_path(key), value]


SQLITE = SqliteDialect()


def filter_sql(filters: Filters, alias: str) -> tuple[str, list[Any]]:
    """Build a ``WHERE`` fragment applying ``filters`` to rows of ``chunks`` (SQLite).

    :func:`octomem.engine.sql.filter_sql` in the SQLite dialect: kinds are an ``IN``
    list; every tag must be present in the JSON ``tags`` array; times and validity in
    epoch seconds; metadata is equality of ``json_extract(metadata, '$."key"')``.

    :param alias: the table name or alias of ``chunks`` in the surrounding query.
    :returns: ``(sql, params)``, the fragment and its positional parameters in order.
    :raises ValueError: ``alias`` is not a plain SQL identifier.
    """
    return sql.filter_sql(filters, alias, SQLITE)
