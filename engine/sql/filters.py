"""Filters as SQL in any dialect, and the :class:`SqlDialect` that says what differs.

Statements are written with ``?`` placeholders and rewritten by :meth:`SqlDialect.q`
for drivers that use another style (psycopg's ``%s``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..types import Filters

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class SqlDialect:
    """What differs between the SQL engines octomem's storages use.

    Subclass it in a storage plugin and override the methods whose SQL differs. The
    defaults are standard SQL with ``?`` placeholders.

    :cvar placeholder: the driver's positional placeholder (``"?"`` or ``"%s"``).
    :cvar true: a literal that is true in a ``WHERE`` clause.
    :cvar greatest: the scalar two-argument maximum (``max`` in SQLite, ``greatest``
        in PostgreSQL).
    :cvar no_limit: the ``LIMIT`` parameter meaning "no limit" (``-1`` in SQLite,
        ``None`` (``NULL``) in PostgreSQL).
    :cvar insert_order: the column giving insertion order of ``documents`` (SQLite's
        ``rowid``, a sequence column elsewhere).
    """

    placeholder = "?"
    true = "1"
    greatest = "max"
    no_limit: int | None = -1
    insert_order = "rowid"

    def q(self, sql: str) -> str:
        """Rewrite the ``?`` placeholders of ``sql`` as this driver's."""
        return sql if self.placeholder == "?" else sql.replace("?", self.placeholder)

    def in_list(self, column: str, values: Sequence[Any]) -> tuple[str, list[Any]]:
        """Return ``column`` is one of ``values`` as ``(sql, params)`` (values non-empty)."""
        return f"{column} IN ({', '.join('?' * len(values))})", list(values)

    def tags_sql(self, alias: str, tags: Sequence[str]) -> tuple[list[str], list[Any]]:
        """Return clauses requiring every tag of ``tags`` in ``alias.tags`` (a JSON array)."""
        raise NotImplementedError

    def metadata_sql(self, alias: str, key: str, value: str) -> tuple[str, list[Any]]:
        """Return ``str(metadata[key]) == value`` as Python renders booleans and numbers."""
        raise NotImplementedError


def validity_sql(filters: Filters, alias: str) -> tuple[list[str], list[Any]]:
    """Return the clauses (and parameters) of the time-validity rules of ``filters``.

    ``since``/``until`` bound ``valid_from``; ``as_of`` keeps
    ``valid_from <= as_of < valid_to`` (an open ``valid_to`` is ``NULL``); otherwise only
    current rows (``valid_to IS NULL``) pass unless ``include_superseded``. Placeholders
    are ``?``.
    """
    clauses: list[str] = []
    params: list[Any] = []
    if filters.valid_after is not None:
        clauses.append(f"{alias}.valid_from >= ?")
        params.append(float(filters.valid_after))
    if filters.valid_before is not None:
        clauses.append(f"{alias}.valid_from < ?")
        params.append(float(filters.valid_before))
    if filters.as_of is not None:
        clauses.append(
            f"{alias}.valid_from <= ? AND ({alias}.valid_to IS NULL OR {alias}.valid_to > ?)")
        params.extend([float(filters.as_of), float(filters.as_of)])
    elif not filters.include_superseded:
        clauses.append(f"{alias}.valid_to IS NULL")
    return clauses, params


def filter_sql(filters: Filters, alias: str, dialect: SqlDialect) -> tuple[str, list[Any]]:
    """Build a ``WHERE`` fragment applying ``filters`` to rows of the ``chunks`` table.

    It must agree with :meth:`Filters.matches` row for row (the storage contract of the
    conformance kit checks that): kinds are list membership, every tag must be in the
    ``tags`` array, times are ``created_at >= after`` and ``created_at < before`` in
    epoch seconds, metadata is equality as Python renders the value, and validity is
    :func:`validity_sql` (by default: current rows only).

    :param alias: the table name or alias of ``chunks`` in the surrounding query.
    :param dialect: the SQL engine's differences.
    :returns: ``(sql, params)``, the fragment in the dialect's placeholders and its
        positional parameters in order.
    :raises ValueError: ``alias`` is not a plain SQL identifier.
    """
    if not _IDENTIFIER.match(alias):
        raise ValueError(f"alias must be a SQL identifier, got {alias!r}")
    clauses: list[str] = []
    params: list[Any] = []
    if filters.kinds:
        sql, kind_params = dialect.in_list(f"{alias}.kind", filters.kinds)
        clauses.append(sql)
        params.extend(kind_params)
    if filters.tags:
        tag_clauses, tag_params = dialect.tags_sql(alias, list(dict.fromkeys(filters.tags)))
        clauses.extend(tag_clauses)
        params.extend(tag_params)
    if filters.created_after is not None:
        clauses.append(f"{alias}.created_at >= ?")
        params.append(float(filters.created_after))
    if filters.created_before is not None:
        clauses.append(f"{alias}.created_at < ?")
        params.append(float(filters.created_before))
    for key, value in filters.metadata.items():
        sql, meta_params = dialect.metadata_sql(alias, str(key), str(value))
        clauses.append(sql)
        params.extend(meta_params)
    valid, valid_params = validity_sql(filters, alias)
    return dialect.q(" AND ".join(clauses + valid) or dialect.true), params + valid_params
