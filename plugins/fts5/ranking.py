"""BM25 top-k statements of the ``fts5`` arm: rank inside FTS5, then check the filters.

The plain statement (``MATCH`` joined to ``chunks`` with the filters, ``ORDER BY
-bm25()``) looks up the ``chunks`` row of *every* row matching any query term. Measured
at 100k chunks with SciFact's 300 test queries (about 17k matching rows per query), that
join cost more than ``bm25()`` itself: p50 29.5 ms for the joined statement against
12.5 ms ranking inside FTS5 and joining only the best rows (same process, interleaved,
2 shared cores at load ~2.4).

:meth:`Fts5Ranker.top` therefore ranks in FTS5 alone, keeps the best ``2k`` rows that pass
the filters, and when fewer than ``k`` of them pass runs the joined statement instead, so
a top-k never comes back short. Filters on kind, tags, times or metadata can exclude most
chunks, and the joined statement skips ``bm25()`` for every row they exclude (p50 16 ms
at 100k with a kind no chunk has, against 30 ms ranking first and then joining): with
any of them the joined statement runs directly; only the validity rule (current rows,
``as_of``) ranks first. Both orders are
``-bm25()`` descending, then rowid (= chunk id) ascending, over the same ``MATCH``
expression: hits and scores are identical to the joined statement's, bit for bit.

Measured and dropped (same data, same process, interleaved; details in the commit log):

- MaxScore with phrase bounds alone (Turtle & Flood, IP&M 1995): rank only rows matching
  an essential (rare) phrase. Exact, but no faster (p50 12.4 vs 12.5 ms): even with the
  true k-th score those are 29% of the matching rows (45% at k = 100). Per-row bound
  sums (WAND) leave 3%, and :mod:`octomem.plugins.fts5.pruning` uses them.
- FTS5 ``NOT`` to exclude rows matching only common phrases (``(all) NOT ((common) NOT
  (rare))``) would keep that work inside FTS5, but some such rows came back, scored twice
  (phrases of the ``NOT`` side counted too): not exact.
- Driving the query from candidate rowids (``rowid IN`` as an FTS5 constraint) runs one
  FTS5 scan per rowid, and ``bm25()`` recounts every phrase's rows each time (~0.3 ms).
- ``optimize`` (one segment) and a 64 MiB page cache: no change (p50 14.7 / 15.0 vs
  15.2 ms); the cost is CPU in ``bm25()`` per matching row (it also reads each row's size
  from ``%_docsize``), not I/O.
- Dropping query terms in more than a fraction of the rows (a df cap) changes results:
  p50 6.9 ms at 5% but only 137/300 queries kept an identical top 10; 11.1 ms at 10%
  with 232/300. Not offered.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from typing import Any

import apsw

from octomem.engine.types import Filters
from octomem.plugins.sqlite.storage import filter_sql

#: Rows ranked without the join per requested hit before falling back to the join: room
#: for ``k`` hits when up to half of the best rows fail the filters. Fetching 2k rows
#: instead of k costs ~1 ms at k = 100 (20 -> 200 rows: p50 10.9 -> 12.0 ms at 100k).
PREFIX_FACTOR = 2

#: Chunk ids bound per filter check, well below SQLite's 32766 host parameters.
ID_BATCH = 4096

#: Auxiliary function returning FTS5's row and token totals (``xRowCount``,
#: ``xColumnTotalSize``: the N and the length sum of ``bm25()``), registered per connection.
TOTALS_FUNCTION = "octomem_fts5_totals"

#: Phrase row counts kept per connection until the database changes; past this many
#: the cache starts over. Common words recur across queries: with cached counts the
#: pruned p50 at 100k chunks, k = 10 went from 10.3 to 9.8 ms over one pass of SciFact's
#: test queries (9.4 ms on a second pass).
HIT_CACHE_SIZE = 10_000

_registered: weakref.WeakSet[apsw.Connection] = weakref.WeakSet()
_hit_cache: weakref.WeakKeyDictionary[
    apsw.Connection, tuple[tuple[int, int, int], dict[tuple[str, str], int]]
] = weakref.WeakKeyDictionary()


def _totals(api: apsw.FTS5ExtensionApi, *args: Any) -> str:
    return f"{api.row_count} {api.column_total_size(-1)}"


def fts5_totals(conn: apsw.Connection, table: str) -> tuple[int, int]:
    """Return FTS5's own ``(rows, tokens)`` of ``table``: the N and the numerator of the
    average length ``bm25()`` uses; ``(0, 0)`` for an empty index."""
    if conn not in _registered:
        conn.register_fts5_function(TOTALS_FUNCTION, _totals)
        _registered.add(conn)
    row = conn.execute(f"SELECT {TOTALS_FUNCTION}({table}) FROM {table} LIMIT 1").fetchone()
    if row is None:
        return (0, 0)
    rows, tokens = str(row[0]).split()
    return (int(rows), int(tokens))


def only_validity(filters: Filters) -> bool:
    """Return whether ``filters`` restrict nothing but validity (current rows, ``as_of``)."""
    return not (
        filters.kinds or filters.tags or filters.metadata
        or filters.created_after is not None or filters.created_before is not None
        or filters.valid_after is not None or filters.valid_before is not None
    )


class Fts5Ranker:
    """Run BM25 top-k statements on one FTS5 table whose rowids are ``chunks`` ids.

    :param conn: the calling thread's connection to the storage file.
    :param table: the FTS5 table name (a plain identifier, never user text).
    """

    def __init__(self, conn: apsw.Connection, table: str) -> None:
        self.conn = conn
        self.table = table

    def row_count(self) -> int:
        """Return the rows in the index as ``bm25()`` counts them (FTS5 ``xRowCount``)."""
        return fts5_totals(self.conn, self.table)[0]

    def phrase_hits(self, phrases: Sequence[str]) -> list[int]:
        """Count the rows matching each FTS5 phrase, as ``bm25()`` does for its IDF.

        :param phrases: FTS5 query strings, one quoted phrase each.
        :returns: one row count per phrase, in order.
        """
        cache = self._hit_cache()
        missing = list(dict.fromkeys(p for p in phrases if (self.table, p) not in cache))
        count = f"(SELECT count(*) FROM {self.table} WHERE {self.table} MATCH ?)"
        for start in range(0, len(missing), 100):
            batch = missing[start:start + 100]
            row = self.conn.execute("SELECT " + ", ".join([count] * len(batch)), batch)
            counts = row.fetchone()
            cache.update(((self.table, p), int(n)) for p, n in zip(batch, counts, strict=True))
        return [cache[(self.table, p)] for p in phrases]

    def _hit_cache(self) -> dict[tuple[str, str], int]:
        """Return this connection's phrase counts, emptied if the database may have changed.

        ``PRAGMA data_version`` changes with commits of other connections,
        ``total_changes()`` with rows written through this one (FTS5's included), and
        ``PRAGMA schema_version`` with a dropped or re-created index.
        """
        stamp = (
            int(self.conn.execute("PRAGMA data_version").fetchone()[0]),
            int(self.conn.total_changes()),
            int(self.conn.execute("PRAGMA schema_version").fetchone()[0]),
        )
        cached = _hit_cache.get(self.conn)
        if cached is None or cached[0] != stamp or len(cached[1]) > HIT_CACHE_SIZE:
            cached = (stamp, {})
            _hit_cache[self.conn] = cached
        return cached[1]

    def top(
        self, expression: str, filters: Filters, k: int, within: str | None = None,
        first: Callable[[int], list[tuple[int, float]]] | None = None,
    ) -> list[tuple[int, float]]:
        """Return the ``k`` best chunks passing ``filters`` for an FTS5 query.

        :param expression: the FTS5 query (``MATCH`` syntax) ``bm25()`` scores.
        :param filters: restrictions on ``chunks``; they never leave fewer than ``k``
            hits when ``k`` matching chunks pass them.
        :param k: number of hits, >= 1.
        :param within: when given, only rows also matching this FTS5 query are ranked;
            their scores still come from ``expression`` alone.
        :param first: ranks the best rows of the index alone (no filter) as
            :meth:`ranked` would, given how many; e.g. the in-RAM postings
            (:class:`~octomem.plugins.fts5.postings.PostingIndex`), cheap enough to try
            before the joined statement whatever the filters. Default: :meth:`ranked`,
            tried only when the filters restrict validity alone.
        :returns: ``(chunk id, -bm25())`` pairs, best (highest) first, ties by ascending
            chunk id; chunk ids absent from ``chunks`` are never returned.
        """
        if first is None and not only_validity(filters):
            return self.ranked_joined(expression, filters, k, within)
        limit = PREFIX_FACTOR * k
        ranked = first(limit) if first is not None else self.ranked(expression, limit, within)
        passing = self.passing([cid for cid, _ in ranked], filters)
        kept = [(cid, score) for cid, score in ranked if cid in passing]
        if len(kept) >= k or len(ranked) < limit:
            return kept[:k]
        return self.ranked_joined(expression, filters, k, within)

    def _within(self, within: str | None) -> tuple[str, list[Any]]:
        if within is None:
            return "", []
        t = self.table
        # The unary + keeps SQLite from handing the IN list to FTS5 as rowid constraints
        # (one FTS5 scan, and one bm25() IDF count, per rowid).
        return f"AND +{t}.rowid IN (SELECT rowid FROM {t} WHERE {t} MATCH ?) ", [within]

    def ranked(
        self, expression: str, limit: int, within: str | None = None
    ) -> list[tuple[int, float]]:
        """Return the ``limit`` best rows of the FTS5 table alone (no filter, no join)."""
        t = self.table
        restrict, params = self._within(within)
        rows: list[Any] = self.conn.execute(
            f"SELECT {t}.rowid, -bm25({t}) AS score FROM {t} WHERE {t} MATCH ? {restrict}"
            f"ORDER BY score DESC, {t}.rowid LIMIT ?",
            [expression, *params, int(limit)],
        ).fetchall()
        return [(int(cid), float(score)) for cid, score in rows]

    def passing(self, chunk_ids: Sequence[int], filters: Filters) -> set[int]:
        """Return the ids among ``chunk_ids`` whose ``chunks`` row passes ``filters``."""
        where, params = filter_sql(filters, "c")
        found: set[int] = set()
        for start in range(0, len(chunk_ids), ID_BATCH):
            batch = list(chunk_ids[start:start + ID_BATCH])
            marks = ", ".join("?" * len(batch))
            rows = self.conn.execute(
                f"SELECT c.id FROM chunks AS c WHERE c.id IN ({marks}) AND {where}",
                [*batch, *params],
            ).fetchall()
            found.update(int(cid) for (cid,) in rows)
        return found

    def ranked_joined(
        self, expression: str, filters: Filters, k: int, within: str | None = None
    ) -> list[tuple[int, float]]:
        """Return the ``k`` best rows passing ``filters``, filtered inside one statement."""
        t = self.table
        restrict, rparams = self._within(within)
        where, params = filter_sql(filters, "c")
        rows: list[Any] = self.conn.execute(
            f"SELECT c.id, -bm25({t}) AS score FROM {t} JOIN chunks AS c ON c.id = {t}.rowid "
            f"WHERE {t} MATCH ? {restrict}AND {where} ORDER BY score DESC, c.id LIMIT ?",
            [expression, *rparams, *params, int(k)],
        ).fetchall()
        return [(int(cid), float(score)) for cid, score in rows]
