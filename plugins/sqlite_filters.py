"""SQL for :class:`~octomem.engine.types.Filters` over ``chunks`` of the ``sqlite`` storage.

The ``fts5`` and ``sqlite-vec`` arms put this fragment inside their own search
statements, so every filter applies before ranking and ``LIMIT``. It must agree with
:meth:`Filters.matches <octomem.engine.types.Filters.matches>` row for row (the storage
contract suite checks that).
"""

from __future__ import annotations

import re
from typing import Any

from octomem.engine.types import Filters

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# ``metadata[key] == value`` compared as Python's ``str(value)`` would render it, so SQL
# agrees with :meth:`Filters.matches` for strings, integers, floats and booleans.
_METADATA_SQL = (
    "(CASE json_type({a}.metadata, ?) WHEN 'true' THEN 'True' WHEN 'false' THEN 'False' "
    "ELSE CAST(json_extract({a}.metadata, ?) AS TEXT) END) = ?"
)


def json_path(key: str) -> str:
    """Return the SQLite JSON path selecting the top-level member ``key`` (any characters)."""
    return '$."' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


def validity_sql(filters: Filters, alias: str) -> tuple[list[str], list[Any]]:
    """Return the clauses (and parameters) of the time-validity rules of ``filters``.

    ``since``/``until`` bound ``valid_from``; ``as_of`` keeps
    ``valid_from <= as_of < valid_to`` (an open ``valid_to`` is ``NULL``); otherwise only
    current rows (``valid_to IS NULL``) pass unless ``include_superseded``.
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


def filter_sql(filters: Filters, alias: str) -> tuple[str, list[Any]]:
    """Build a ``WHERE`` fragment applying ``filters`` to rows of the ``chunks`` table.

    Kinds are an ``IN`` list; every tag must be present in the JSON ``tags`` array
    (one ``EXISTS`` over ``json_each`` per tag); times are ``created_at >= after`` and
    ``created_at < before`` in epoch seconds; metadata is equality of
    ``json_extract(metadata, '$."key"')`` rendered as text; validity is
    :func:`validity_sql` (by default: current rows only).

    :param filters: the restrictions.
    :param alias: the table name or alias of ``chunks`` in the surrounding query.
    :returns: ``(sql, params)``, the fragment and its positional parameters in order.
    :raises ValueError: ``alias`` is not a plain SQL identifier.
    """
    if not _IDENTIFIER.match(alias):
        raise ValueError(f"alias must be a SQL identifier, got {alias!r}")
    clauses: list[str] = []
    params: list[Any] = []
    if filters.kinds:
        clauses.append(f"{alias}.kind IN ({', '.join('?' * len(filters.kinds))})")
        params.extend(filters.kinds)
    for tag in dict.fromkeys(filters.tags):
        clauses.append(f"EXISTS (SELECT 1 FROM json_each({alias}.tags) AS t WHERE t.value = ?)")
        params.append(tag)
    if filters.created_after is not None:
        clauses.append(f"{alias}.created_at >= ?")
        params.append(float(filters.created_after))
    if filters.created_before is not None:
        clauses.append(f"{alias}.created_at < ?")
        params.append(float(filters.created_before))
    for key, value in filters.metadata.items():
        clauses.append(_METADATA_SQL.format(a=alias))
        params.extend([json_path(str(key)), json_path(str(key)), str(value)])
    valid, valid_params = validity_sql(filters, alias)
    return (" AND ".join(clauses + valid) or "1"), params + valid_params
