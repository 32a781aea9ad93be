"""Rows bound as one JSON parameter per table and batch, expanded by SQLite in C.

Binding a batch's ``documents`` and ``chunks`` rows value by value (~280,000 values per
10k documents) holds the GIL for the whole bind, and each statement's return waits for it
again: the writing thread then takes turns with the worker thread preparing the next batch
(:func:`octomem.engine.writes.prepared`) instead of running beside it (round 10,
``benchmarks/results/ingest/2026-12-03-round10``). Here the worker encodes the rows as one
JSON array of arrays (:func:`encode`; the C encoder, ~14 ms per 10k one-chunk rows) and the
writer binds that one string to ``INSERT ... SELECT value ->> 0, ... FROM jsonb_each(?)``
(:func:`insert`): SQLite parses and inserts the whole batch without calling back into
Python.

The stored values are the same as binding each one: ``->>`` gives a JSON string as TEXT
(NUL and characters beyond the BMP included), an integer as INTEGER, ``null`` as NULL, and
a number written with a fraction or exponent as the REAL Python wrote (SQLite's JSON
parser reads back every ``repr`` of a finite double exactly: 799,875 values, random bit
patterns included, ``benchmarks/results/ingest/2026-12-03-round11``). Rows JSON would
store differently are never encoded (:func:`encode` answers ``None`` and the caller binds
the values as before): a value of another type than ``str``, ``int``, ``float`` or
``None`` (binding raises for most; a list would be stored as its JSON), a non-finite float (bound as NULL), and a lone surrogate (binding it raises;
SQLite would decode its escape into bytes that are not UTF-8). One difference is left:
an integer beyond 64 bits (no value octomem makes; a caller's ``event_time``) is stored as
the REAL SQLite reads from it, where binding it raised ``OverflowError``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from itertools import chain
from typing import Any

import apsw

#: One encoder, made once: ASCII output (the non-ASCII characters as ``\\uXXXX``
#: escapes: 14 against 30 ms to encode 10k harness rows, ``ensure_ascii=False``), no NaN
#: or infinity, no check for a value that holds itself (rows are flat tuples).
_ENCODER = json.JSONEncoder(ensure_ascii=True, allow_nan=False, check_circular=False)
#: An escaped surrogate (``\\ud800``-``\\udfff``): a lone one would not be stored as
#: binding stores it. Pairs (characters beyond the BMP) match too and are bound value by
#: value, as are texts holding a backslash before ``ud8``-``udf`` (never wrong, rarely slower).
_SURROGATE = re.compile(r"\\ud[89a-f]", re.IGNORECASE)
#: The types whose JSON SQLite reads back as the value binding stores (exact types: a
#: subclass, ``bool`` included, is bound value by value).
_SCALARS = frozenset((str, int, float, type(None)))


def encode(rows: Sequence[tuple[Any, ...]]) -> str | None:
    """Return ``rows`` as one JSON array of arrays for :func:`insert`, or ``None`` when
    binding the values one by one would store (or refuse) something the JSON would not.

    :param rows: tuples of values, all of the same width.
    """
    if not _SCALARS.issuperset(map(type, chain.from_iterable(rows))):  # 2.5 ms per 10k rows
        return None
    try:
        payload = _ENCODER.encode(rows)
    except (TypeError, ValueError):  # not JSON (binding raises), or NaN/inf
        return None
    if _SURROGATE.search(payload):
        return None
    return payload


def insert(tx: apsw.Connection, head: str, width: int, payload: str) -> None:
    """Insert the rows of ``payload`` (:func:`encode`, ``width`` values each) by ``head``
    (``INSERT INTO table (columns)``) in one statement, in the array's order."""
    values = ", ".join(f"value ->> {i}" for i in range(width))
    tx.execute(f"{head} SELECT {values} FROM jsonb_each(?) ORDER BY key", (payload,))
