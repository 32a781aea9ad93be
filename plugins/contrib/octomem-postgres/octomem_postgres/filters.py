"""SQL for :class:`~octomem.engine.types.Filters` over ``chunks`` of the ``postgres`` storage.

The ``postgres-fts`` and ``pgvector`` arms put this fragment inside their own search
statements, so every filter applies before ranking and ``LIMIT``: the PostgreSQL dialect of
:mod:`octomem.engine.sql`, shared with the ``sqlite`` storage. It agrees with
:meth:`Filters.matches <octomem.engine.types.Filters.matches>` row for row (the storage
contract of the conformance kit checks that). Statements are built with ``?`` and handed
to psycopg with its ``%s`` placeholders.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from octomem.engine import sql
from octomem.engine.types import Filters

# ``metadata[key] == value`` compared as Python's ``str(value)`` renders it: booleans as
# True/False, numbers and strings as jsonb's text (``->>``).
_METADATA_SQL = (
    "(CASE jsonb_typeof({a}.metadata -> ?) WHEN 'boolean' THEN "
    "CASE WHEN ({a}.metadata ->> ?)::boolean THEN 'True' ELSE 'False' END "
    "ELSE {a}.metadata ->> ? END) = ?"
)


class PostgresDialect(sql.SqlDialect):
    """PostgreSQL through psycopg: ``%s`` placeholders, ``greatest``, jsonb operators."""

    placeholder = "%s"
    true = "TRUE"
    greatest = "greatest"
    no_limit = None
    insert_order = "seq"

    def in_list(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """``column = ANY(array)``: one parameter, whatever the number of values."""
        return f"{column} = ANY(?)", [list(values)]

    def tags_sql(self, alias: str, tags: Sequence[str]) -> tuple[list[str], list[Any]]:
        """jsonb containment (``tags @> '["a","b"]'``), served by a GIN index."""
        return [f"{alias}.tags @> ?::jsonb"], [json.dumps(list(tags), ensure_ascii=False)]

    def metadata_sql(self, alias: str, key: str, value: str) -> tuple[str, list[Any]]:
        """``metadata ->> key`` rendered as Python renders the value."""
        return _METADATA_SQL.format(a=alias), [key, key, key, value]


POSTGRES = PostgresDialect()


def filter_sql(filters: Filters, alias: str) -> tuple[str, list[Any]]:
    """Build a ``WHERE`` fragment applying ``filters`` to rows of ``chunks`` (PostgreSQL).

    :func:`octomem.engine.sql.filter_sql` in the PostgreSQL dialect: kinds are
    ``kind = ANY(array)``, tags jsonb containment, metadata ``metadata ->> key``.

    :param alias: the table name or alias of ``chunks`` in the surrounding query.
    :returns: ``(sql, params)``, the fragment (``%s`` placeholders) and its parameters.
    :raises ValueError: ``alias`` is not a plain SQL identifier.
    """
    return sql.filter_sql(filters, alias, POSTGRES)
