"""SQL of the ``fts5`` arm's BM25 ranking: top-k statements, phrase counts, row count.

Every score here is FTS5's own ``-bm25()`` over the *whole* query expression, so a
pruned search and the plain one compute bit-identical scores for a chunk: pruning only
restricts which rows reach ``bm25()`` (see :mod:`octomem.plugins.fts5_pruning`).

Filters are checked on the best rows of the FTS5 ranking, never on a truncated list
that may come back short: :meth:`Fts5Ranker.top` ranks without the ``chunks`` join,
keeps the rows passing the filters, and when fewer than ``k`` of a full prefix pass it
runs the same statement with the filters inside the SQL (the join) instead. Measured at
100k chunks (SciFact queries, 2 shared cores): the ``chunks`` join costs about 1 µs per
matching row against about 0.5 µs for ``bm25()`` itself, so ranking before the join is
the larger half of the speed-up.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import apsw

from octomem.engine.types import Filters
from octomem.plugins.sqlite_storage import filter_sql

#: Name of the auxiliary function (FTS5 ``xRowCount``) registered on each connection.
ROW_COUNT_FUNCTION = "octomem_fts5_row_count"

#: Rows ranked without the join per requested hit, before falling back to the join:
#: room for ``k`` hits when up to half of the best rows fail the filters.
PREFIX_FACTOR = 2

_registered: weakref.WeakSet[apsw.Connection] = weakref.WeakSet()


def _row_count(api: apsw.FTS5ExtensionApi, *args: Any) -> int:
    return api.row_count


def _ensure_functions(conn: apsw.Connection) -> None:
    if conn not in _registered:
        conn.register_fts5_function(ROW_COUNT_FUNCTION, _row_count)
        _registered.add(conn)


class Fts5Ranker:
    """Run BM25 top-k statements on one FTS5 table joined to ``chunks`` by rowid.

    :param conn: the calling thread's connection to the storage file.
    :param table: the FTS5 table name (a plain identifier, never user text).
    """

    def __init__(self, conn: apsw.Connection, table: str) -> None:
        self.conn = conn
        self.table = table

    def row_count(self) -> int:
        """Return the rows in the index as ``bm25()`` counts them (FTS5 ``xRowCount``)."""
        _ensure_functions(self.conn)
        row = self.conn.execute(
            f"SELECT {ROW_COUNT_FUNCTION}({self.table}) FROM {self.table} LIMIT 1").fetchone()
        return int(row[0]) if row else 0

    def phrase_hits(self, phrases: Sequence[str]) -> list[int]:
        """Count the rows matching each FTS5 phrase, as ``bm25()`` counts them for its IDF.

        :param phrases: FTS5 query strings, one quoted phrase each.
        :returns: one row count per phrase, in order.
        """
        sql = f"SELECT count(*) FROM {self.table} WHERE {self.table} MATCH ?"
        return [int(self.conn.execute(sql, (p,)).fetchone()[0]) for p in phrases]

    def top(
        self, expression: str, filters: Filters, k: int, essential: str | None = None
    ) -> list[tuple[int, float]]:
        """Return the ``k`` best chunks passing ``filters``, scored over ``expression``.

        :param expression: the FTS5 query whose phrases ``bm25()`` scores.
        :param filters: restrictions on ``chunks``; never leave fewer than ``k`` hits
            when ``k`` matching chunks pass them.
        :param k: number of hits, >= 1.
        :param essential: when given, only rows that also match this FTS5 query are
            ranked (their scores still come from ``expression``).
        :returns: ``(chunk id, -bm25())`` pairs, best first, ties by ascending id.
        """
        limit = PREFIX_FACTOR * k
        ranked = self._ranked(expression, essential, limit)
        passing = self._passing([cid for cid, _ in ranked], filters)
        kept = [(cid, score) for cid, score in ranked if cid in passing]
        if len(kept) >= k or len(ranked) < limit:
            return kept[:k]
        return self._ranked_joined(expression, essential, filters, k)

    def _restriction(self, essential: str | None) -> tuple[str, list[Any]]:
        if essential is None:
            return "", []
        t = self.table
        return f"AND +{t}.rowid IN (SELECT rowid FROM {t} WHERE {t} MATCH ?) ", [essential]

    def _ranked(
        self, expression: str, essential: str | None, limit: int
    ) -> list[tuple[int, float]]:
        t = self.table
        restrict, params = self._restriction(essential)
        rows: list[Any] = self.conn.execute(
            f"SELECT {t}.rowid, -bm25({t}) AS score FROM {t} WHERE {t} MATCH ? {restrict}"
            f"ORDER BY score DESC, {t}.rowid LIMIT ?",
            [expression, *params, limit],
        ).fetchall()
        return [(int(cid), float(score)) for cid, score in rows]

    def _passing(self, chunk_ids: Sequence[int], filters: Filters) -> set[int]:
        if not chunk_ids:
            return set()
        where, params = filter_sql(filters, "c")
        marks = ", ".join("?" * len(chunk_ids))
        rows = self.conn.execute(
            f"SELECT c.id FROM chunks AS c WHERE c.id IN ({marks}) AND {where}",
            [*chunk_ids, *params],
        ).fetchall()
        return {int(cid) for (cid,) in rows}

    def _ranked_joined(
        self, expression: str, essential: str | None, filters: Filters, k: int
    ) -> list[tuple[int, float]]:
        t = self.table
        restrict, rparams = self._restriction(essential)
        where, params = filter_sql(filters, "c")
        rows: list[Any] = self.conn.execute(
            f"SELECT c.id, -bm25({t}) AS score FROM {t} JOIN chunks AS c ON c.id = {t}.rowid "
            f"WHERE {t} MATCH ? {restrict}AND {where} ORDER BY score DESC, c.id LIMIT ?",
            [expression, *rparams, *params, k],
        ).fetchall()
        return [(int(cid), float(score)) for cid, score in rows]
