"""The vec0 tables of the ``sqlite-vec`` arm: one vector set per embedder identity.

A *vector set* is one embedder's vectors — its model id and dimension — in a vec0 table
of its own, listed in ``vector_sets``; vectors of two models are never compared. The
single ``vec_chunks`` table written before vector sets existed is adopted as the set of
its recorded model. :func:`knn_sql` builds vec0's KNN statement with the filters inside
the KNN itself (kinds and creation time as vec0 metadata constraints, the rest through
``chunks``).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, replace
from typing import Any

import apsw

from octomem.engine.types import Filters
from octomem.plugins.sqlite.storage import filter_sql

#: The registry of vector sets: one row per embedder identity (model id, dimension).
SETS_TABLE = "vector_sets"
#: The single vec0 table of indexes written before vector sets, and the ``meta`` keys
#: that recorded its model; adopted as a vector set by :meth:`SqliteVecSemanticArm.bind`.
LEGACY_TABLE = "vec_chunks"
LEGACY_META_MODEL_ID = "sqlite-vec.model_id"
LEGACY_META_DIM = "sqlite-vec.dim"
#: The largest ``k`` a vec0 KNN query accepts (sqlite-vec 0.1.9).
KNN_MAX_K = 4096
#: Vectors per vec0 block (``chunk_size``) of a vector set created from now on (sqlite-vec's
#: default is 1024; a set keeps the size it was created with). vec0 writes each vector into
#: its block's blob, reaching the offset through the blob's overflow pages: a 1024 x 384-d
#: block spans ~380 pages of 4 KB, a 256 block ~95. Chosen by the 10k ingest benchmark
#: (``benchmarks/results/peers/harness.py ingest``; 384-d random vectors, transactions of
#: 256): vec0 inserts 0.31 -> 0.18 s CPU at 256 (128: 0.17, 64: 0.22), 100k in
#: transactions of 1,024 2.6 -> 2.2 s; a vec0 KNN over 100k (k = 10) took 124 ms at 1024 and
#: 123 ms at 256, the file the same size (load 7-9).
VEC0_CHUNK_SIZE = 256

_SETS_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {SETS_TABLE} (
    model_id TEXT NOT NULL, dim INTEGER NOT NULL,
    table_name TEXT NOT NULL UNIQUE,  -- the vec0 table holding this model's vectors
    created_at REAL NOT NULL,         -- seconds since the Unix epoch, UTC
    PRIMARY KEY (model_id, dim)
)"""


@dataclass(frozen=True, slots=True)
class VectorSet:
    """The vectors of one embedder: its identity and the vec0 table that holds them.

    :param created_at: when the set was created, seconds since the Unix epoch (UTC).
    """

    model_id: str
    dim: int
    table: str
    created_at: float


def vector_table_name(model_id: str, dim: int) -> str:
    """Return the vec0 table name of a vector set: ``vec_`` + 16 hex digits of a sha256."""
    digest = hashlib.sha256(f"{model_id}\x1f{int(dim)}".encode()).hexdigest()
    return f"vec_{digest[:16]}"


def _exists(conn: apsw.Connection, table: str) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (table,)).fetchone()
    return row is not None


def chunk_fields(
    tx: apsw.Connection, table: str, ids: list[int]
) -> tuple[dict[int, tuple[str, float]], set[int] | None]:
    """Return ``(kind, created_at)`` of each of ``ids`` still in ``chunks``, and which of them
    hold a vector in the vec0 ``table`` already.

    The vectors are looked up in vec0's ``<table>_rowids`` shadow table (sqlite-vec 0.1.x:
    its rowid is the chunk id), in the same query: a ``DELETE`` per id that held no vector
    was ~15 % of writing 10k new vectors. Without that table the second value is ``None``
    (the caller then deletes before each insert, as if every id might hold a vector).
    """
    # consecutive ids (an ingest's new chunks): a range of the primary key, not json_each
    span = ids and ids[-1] - ids[0] == len(ids) - 1 and ids == list(range(ids[0], ids[-1] + 1))
    where, params = ("c.id BETWEEN ? AND ?", (ids[0], ids[-1])) if span else \
        ("c.id IN (SELECT value FROM json_each(?))", (json.dumps(ids),))
    if not _exists(tx, f"{table}_rowids"):
        rows = tx.execute(f"SELECT c.id, c.kind, c.created_at FROM chunks AS c WHERE {where}",
                          params)
        return {cid: (kind, created) for cid, kind, created in rows}, None
    rows = tx.execute(
        f"SELECT c.id, c.kind, c.created_at, r.rowid IS NOT NULL FROM chunks AS c "
        f"LEFT JOIN {table}_rowids AS r ON r.rowid = c.id WHERE {where}", params).fetchall()
    return ({cid: (kind, created) for cid, kind, created, _ in rows},
            {cid for cid, _, _, has in rows if has})


def vector_sets(conn: apsw.Connection) -> list[VectorSet]:
    """Return every registered vector set, oldest first (empty before the first bind)."""
    if not _exists(conn, SETS_TABLE):
        return []
    rows = conn.execute(
        f"SELECT model_id, dim, table_name, created_at FROM {SETS_TABLE} "
        "ORDER BY created_at, table_name").fetchall()
    return [VectorSet(str(m), int(d), str(t), float(c)) for m, d, t, c in rows]


def _adopt_legacy(tx: apsw.Connection) -> None:
    """Register a pre-vector-sets ``vec_chunks`` table as the set of its recorded model."""
    meta = dict(tx.execute(
        "SELECT key, value FROM meta WHERE key IN (?, ?)", (LEGACY_META_MODEL_ID, LEGACY_META_DIM)))
    if LEGACY_META_MODEL_ID not in meta:
        return
    if _exists(tx, LEGACY_TABLE):
        tx.execute(
            f"INSERT OR IGNORE INTO {SETS_TABLE} (model_id, dim, table_name, created_at) "
            "VALUES (?, ?, ?, ?)",
            (meta[LEGACY_META_MODEL_ID], int(meta.get(LEGACY_META_DIM) or 0), LEGACY_TABLE,
             time.time()))
    tx.execute("DELETE FROM meta WHERE key IN (?, ?)", (LEGACY_META_MODEL_ID, LEGACY_META_DIM))


def _current_only(filters: Filters) -> bool:
    """True when the validity rule of ``filters`` is the default: current chunks only."""
    return (filters.as_of is None and filters.valid_after is None and filters.valid_before is None
            and not filters.include_superseded)


def knn_sql(
    filters: Filters, table: str, current_in_subquery: bool = True
) -> tuple[str, list[Any]]:
    """Build the vec0 KNN query over ``table`` with ``filters`` as constraints of the KNN itself.

    :param table: the vec0 table of the bound vector set (:attr:`VectorSet.table`).
    :param current_in_subquery: apply the default current-only rule in SQL even when
        it is the only rule on ``chunks`` (otherwise the caller drops superseded hits).
    :returns: ``(sql, params)``; the caller prepends the query vector (float32 bytes)
        and ``k`` to ``params``. Rows are ``(chunk_id, distance)``, nearest first.
    """
    clauses = ["embedding MATCH ?", "k = ?"]
    params: list[Any] = []
    if filters.kinds:
        clauses.append(f"kind IN ({', '.join('?' * len(filters.kinds))})")
        params.extend(filters.kinds)
    if filters.created_after is not None:
        clauses.append("created_at >= ?")
        params.append(float(filters.created_after))
    if filters.created_before is not None:
        clauses.append("created_at < ?")
        params.append(float(filters.created_before))
    rest = replace(filters, kinds=(), created_after=None, created_before=None)
    if rest.tags or rest.metadata or not _current_only(rest) or current_in_subquery:
        where, rest_params = filter_sql(rest, "c")
        if where != "1":
            clauses.append(f"chunk_id IN (SELECT c.id FROM chunks AS c WHERE {where})")
            params.extend(rest_params)
    sql = f"SELECT chunk_id, distance FROM {table} WHERE {' AND '.join(clauses)} ORDER BY distance"
    return sql, params
