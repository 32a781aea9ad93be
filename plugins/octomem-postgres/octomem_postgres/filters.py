"""SQL for :class:`~octomem.engine.types.Filters` over ``chunks`` of the ``postgres`` storage.

The ``postgres-fts`` and ``pgvector`` arms put this fragment inside their own search
statements, so every filter applies before ranking and ``LIMIT``. It agrees with
:meth:`Filters.matches <octomem.engine.types.Filters.matches>` row for row (the storage
contract of the conformance kit checks that). Placeholders are psycopg's ``%s``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from octomem.engine.types import Filters

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# ``metadata[key] == value`` compared as Python's ``str(value)`` renders it: booleans as
# True/False, numbers and strings as jsonb's text (``->>``).
_METADATA_SQL = (
    "(CASE jsonb_typeof({a}.metadata -> %s) WHEN 'boolean' THEN "
    "CASE WHEN ({a}.metadata ->> %s)::boolean THEN 'True' ELSE 'False' END "
    "ELSE {a}.metadata ->> %s END) = %s"
)


def validity_sql(filters: Filters, alias: str) -> tuple[list[str], list[Any]]:
    """Return the clauses (and parameters) of the time-validity rules of ``filters``.

    ``since``/``until`` bound ``valid_from``; ``as_of`` keeps
    ``valid_from <= as_of < valid_to`` (an open ``valid_to`` is ``NULL``); otherwise only
    current rows (``valid_to IS NULL``) pass unless ``include_superseded``.
    """
    clauses: list[str] = []
    params: list[Any] = []
    if filters.valid_after is not None:
        clauses.append(f"{alias}.valid_from >= %s")
        params.append(float(filters.valid_after))
    if filters.valid_before is not None:
        clauses.append(f"{alias}.valid_from < %s")
        params.append(float(filters.valid_before))
    if filters.as_of is not None:
        clauses.append(
            f"{alias}.valid_from <= %s AND ({alias}.valid_to IS NULL OR {alias}.valid_to > %s)")
        params.extend([float(filters.as_of), float(filters.as_of)])
    elif not filters.include_superseded:
        clauses.append(f"{alias}.valid_to IS NULL")
    return clauses, params


def filter_sql(filters: Filters, alias: str) -> tuple[str, list[Any]]:
    """Build a ``WHERE`` fragment applying ``filters`` to rows of the ``chunks`` table.

    Kinds are ``kind = ANY(array)``; tags are jsonb containment (``tags @> '["a","b"]'``,
    served by a GIN index); times are ``created_at >= after`` and ``created_at < before``
    in epoch seconds; metadata is equality of ``metadata ->> key`` rendered as Python
    renders the value; validity is :func:`validity_sql` (by default: current rows only).

    :param alias: the table name or alias of ``chunks`` in the surrounding query.
    :returns: ``(sql, params)``, the fragment and its positional parameters in order.
    :raises ValueError: ``alias`` is not a plain SQL identifier.
    """
    if not _IDENTIFIER.match(alias):
        raise ValueError(f"alias must be a SQL identifier, got {alias!r}")
    clauses: list[str] = []
    params: list[Any] = []
    if filters.kinds:
        clauses.append(f"{alias}.kind = ANY(%s)")
        params.append(list(filters.kinds))
    if filters.tags:
        clauses.append(f"{alias}.tags @> %s::jsonb")
        params.append(json.dumps(list(dict.fromkeys(filters.tags)), ensure_ascii=False))
    if filters.created_after is not None:
        clauses.append(f"{alias}.created_at >= %s")
        params.append(float(filters.created_after))
    if filters.created_before is not None:
        clauses.append(f"{alias}.created_at < %s")
        params.append(float(filters.created_before))
    for key, value in filters.metadata.items():
        clauses.append(_METADATA_SQL.format(a=alias))
        params.extend([str(key), str(key), str(key), str(value)])
    valid, valid_params = validity_sql(filters, alias)
    return (" AND ".join(clauses + valid) or "TRUE"), params + valid_params
