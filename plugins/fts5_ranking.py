"""BM25 top-k statements of the ``fts5`` arm: rank inside FTS5, then check the filters.

The plain statement (``MATCH`` joined to ``chunks`` with the filters, ``ORDER BY
-bm25()``) looks up the ``chunks`` row of *every* row matching any query term. Measured
at 100k chunks with SciFact's 300 test queries (about 17k matching rows per query), that
join cost more than ``bm25()`` itself: p50 29.5 ms for the joined statement against
12.5 ms ranking inside FTS5 and joining only the best rows (same process, interleaved,
2 shared cores at load ~2.4).

:meth:`Fts5Ranker.top` therefore ranks in FTS5 alone, keeps the best ``2k`` rows that pass
the filters, and when fewer than ``k`` of them pass (filters excluding most chunks) runs
the joined statement instead, so a top-k never comes back short. Both orders are
``-bm25()`` descending, then rowid (= chunk id) ascending, over the same ``MATCH``
expression: hits and scores are identical to the joined statement's, bit for bit.

Measured and dropped (same data, same process, interleaved; details in the commit log):

- MaxScore (Turtle & Flood, IP&M 1995) with phrase bounds ``idf * (k1 + 1)``: rows
  matching an essential (rare) phrase were restricted with ``+rowid IN (SELECT rowid
  ... MATCH essential)`` and scored over the whole query. Exact (300/300 identical), but
  no faster (p50 12.4 vs 12.5 ms): with natural-language queries the bounds leave 29%
  of the matching rows to score even with the true k-th score (45% at k = 100), the
  probe for a lower bound of that score leaves ~45%, and counting each phrase's rows,
  the probe and building the ``IN`` set cost what the skipped ``bm25()`` calls saved.
  Exact per-phrase maxima instead of ``idf * (k1 + 1)`` still left 20%.
- FTS5 ``NOT`` to exclude rows matching only common phrases (``(all) NOT ((common) NOT
  (rare))``) kept FTS5 iterating in C, but ``bm25()`` then also counted phrases of the
  ``NOT`` side on some rows (doubled scores at k = 100): not exact.
- Driving the query from candidate rowids (``rowid IN`` as an FTS5 constraint) runs one
  FTS5 scan per rowid, and ``bm25()`` recounts every phrase's rows each time (~0.3 ms).
- ``optimize`` (one segment) and a 64 MiB page cache: no change (p50 14.7 / 15.0 vs
  15.2 ms); the cost is ``bm25()``'s per-row work (``%_docsize`` lookup), not I/O.
- Dropping query terms in more than a fraction of the rows (a df cap) changes results:
  p50 6.9 ms at 5% but only 137/300 queries kept an identical top 10; 11.1 ms at 10%
  with 232/300. Not offered.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import apsw

from octomem.engine.types import Filters
from octomem.plugins.sqlite_storage import filter_sql

#: Rows ranked without the join per requested hit before falling back to the join: room
#: for ``k`` hits when up to half of the best rows fail the filters. Fetching 2k rows
#: instead of k costs ~1 ms at k = 100 (20 -> 200 rows: p50 10.9 -> 12.0 ms at 100k).
PREFIX_FACTOR = 2

#: Chunk ids bound per filter check, well below SQLite's 32766 host parameters.
ID_BATCH = 4096


class Fts5Ranker:
    """Run BM25 top-k statements on one FTS5 table whose rowids are ``chunks`` ids.

    :param conn: the calling thread's connection to the storage file.
    :param table: the FTS5 table name (a plain identifier, never user text).
    """

    def __init__(self, conn: apsw.Connection, table: str) -> None:
        self.conn = conn
        self.table = table

    def top(self, expression: str, filters: Filters, k: int) -> list[tuple[int, float]]:
        """Return the ``k`` best chunks passing ``filters`` for an FTS5 query.

        :param expression: the FTS5 query (``MATCH`` syntax) ``bm25()`` scores.
        :param filters: restrictions on ``chunks``; they never leave fewer than ``k``
            hits when ``k`` matching chunks pass them.
        :param k: number of hits, >= 1.
        :returns: ``(chunk id, -bm25())`` pairs, best (highest) first, ties by ascending
            chunk id; chunk ids absent from ``chunks`` are never returned.
        """
        limit = PREFIX_FACTOR * k
        ranked = self.ranked(expression, limit)
        passing = self.passing([cid for cid, _ in ranked], filters)
        kept = [(cid, score) for cid, score in ranked if cid in passing]
        if len(kept) >= k or len(ranked) < limit:
            return kept[:k]
        return self.ranked_joined(expression, filters, k)

    def ranked(self, expression: str, limit: int) -> list[tuple[int, float]]:
        """Return the ``limit`` best rows of the FTS5 table alone (no filter, no join)."""
        t = self.table
        rows: list[Any] = self.conn.execute(
            f"SELECT rowid, -bm25({t}) AS score FROM {t} WHERE {t} MATCH ? "
            "ORDER BY score DESC, rowid LIMIT ?",
            [expression, int(limit)],
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
        self, expression: str, filters: Filters, k: int
    ) -> list[tuple[int, float]]:
        """Return the ``k`` best rows passing ``filters``, filtered inside one statement."""
        t = self.table
        where, params = filter_sql(filters, "c")
        rows: list[Any] = self.conn.execute(
            f"SELECT c.id, -bm25({t}) AS score FROM {t} JOIN chunks AS c ON c.id = {t}.rowid "
            f"WHERE {t} MATCH ? AND {where} ORDER BY score DESC, c.id LIMIT ?",
            [expression, *params, int(k)],
        ).fetchall()
        return [(int(cid), float(score)) for cid, score in rows]
