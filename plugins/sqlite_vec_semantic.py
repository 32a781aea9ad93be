"""The ``sqlite-vec`` semantic arm: exact cosine KNN over a vec0 table in the ``sqlite`` storage.

The vec0 virtual table (sqlite-vec >= 0.1.6) holds one float32 vector per chunk, keyed
by chunk id, with ``distance_metric=cosine``; the score is ``1 - distance``, the cosine
similarity in [-1, 1], higher is better. Search is brute force (exact), not approximate.

Filters are applied *inside* the KNN, never by post-filtering a top-k:

- ``kind`` and ``created_at`` are vec0 *metadata columns*, so ``kind IN (...)``,
  ``created_at >= ?`` and ``created_at < ?`` are constraints vec0 evaluates while it
  selects the k nearest rows;
- tags and metadata go in ``chunk_id IN (SELECT id FROM chunks WHERE ...)``: vec0 takes
  a ``rowid IN`` constraint on a KNN query (via ``sqlite3_vtab_in``) and scores only the
  listed rows.

Limits of sqlite-vec 0.1.9: ``k`` is at most 4096 per query (larger ``k`` is clamped);
a zero vector has no cosine distance (NULL), so zero or non-finite vectors are refused.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import apsw
import numpy as np
from octomem.engine.arms import ArmContext, ArmSpec, NoOptions
from octomem.engine.errors import EmbedderMismatchError, InvalidQueryError, OctomemError
from octomem.engine.hookspecs import hookimpl
from octomem.engine.types import Filters, Hit, Run
from octomem.plugins.sqlite_storage import SqliteStorage, filter_sql, require_sqlite

NAME = "sqlite-vec"
TABLE = "vec_chunks"
#: ``meta`` keys recording which embedder made the stored vectors.
META_MODEL_ID = "sqlite-vec.model_id"
META_DIM = "sqlite-vec.dim"
#: The largest ``k`` a vec0 KNN query accepts (sqlite-vec 0.1.9).
KNN_MAX_K = 4096


def _read_meta(conn: apsw.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def knn_sql(filters: Filters) -> tuple[str, list[Any]]:
    """Build the vec0 KNN query with ``filters`` as constraints of the KNN itself.

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
    if filters.tags or filters.metadata:
        rest, rest_params = filter_sql(Filters(tags=filters.tags, metadata=filters.metadata), "c")
        clauses.append(f"chunk_id IN (SELECT c.id FROM chunks AS c WHERE {rest})")
        params.extend(rest_params)
    sql = f"SELECT chunk_id, distance FROM {TABLE} WHERE {' AND '.join(clauses)} ORDER BY distance"
    return sql, params


class SqliteVecSemanticArm:
    """Cosine KNN over a vec0 table stored beside the chunks in the ``sqlite`` storage.

    :param storage: the ``sqlite`` storage; vectors are written through its transactions.
    :raises IncompatibleArmsError: ``storage`` is not the ``sqlite`` storage.
    """

    name = NAME

    def __init__(self, storage: Any) -> None:
        self.storage: SqliteStorage = require_sqlite(storage, NAME)
        self.model_id: str | None = None
        self.dim: int | None = None
        self._load_binding(self.storage.connection())

    def _load_binding(self, conn: apsw.Connection) -> bool:
        """Read the recorded model and dimension; return True when the index is bound."""
        if self.dim is None:
            dim = _read_meta(conn, META_DIM)
            self.model_id = _read_meta(conn, META_MODEL_ID)
            self.dim = int(dim) if dim is not None else None
        return self.dim is not None

    def bind(self, tx: apsw.Connection, model_id: str, dim: int) -> None:
        """Record ``model_id`` and ``dim`` on first use and create the vec0 table.

        :param dim: vector dimension, >= 1.
        :raises EmbedderMismatchError: vectors of another model or dimension are stored;
            the message names both models and how to re-embed.
        """
        if int(dim) < 1:
            raise InvalidQueryError(f"dim must be >= 1, got {dim}")
        old_model, old_dim = _read_meta(tx, META_MODEL_ID), _read_meta(tx, META_DIM)
        if old_model is not None and (old_model != model_id or int(old_dim or 0) != int(dim)):
            raise EmbedderMismatchError(
                f"the vector index in {self.storage.path} holds {old_dim}-dimensional vectors "
                f"of {old_model!r}, but the configured embedder is {model_id!r} ({dim} "
                "dimensions); vectors of two models are never compared. Run `octomem reindex` "
                f"to drop the old vectors and re-embed every chunk with {model_id!r}, or "
                f"configure {old_model!r} again"
            )
        tx.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {TABLE} USING vec0(chunk_id INTEGER PRIMARY KEY, "
            f"embedding float[{int(dim)}] distance_metric=cosine, kind TEXT, created_at FLOAT)"
        )
        self.storage.set_meta(tx, META_MODEL_ID, model_id)
        self.storage.set_meta(tx, META_DIM, str(int(dim)))
        self.model_id, self.dim = model_id, int(dim)

    def reset(self, tx: apsw.Connection) -> None:
        """Drop every vector and the recorded embedder (for ``octomem reindex``) inside ``tx``."""
        tx.execute(f"DROP TABLE IF EXISTS {TABLE}")
        tx.execute("DELETE FROM meta WHERE key IN (?, ?)", (META_MODEL_ID, META_DIM))
        self.model_id = self.dim = None

    def _checked(self, vectors: np.ndarray, rows: int) -> np.ndarray:
        """Return ``vectors`` as C-contiguous float32 ``(rows, dim)``, or raise."""
        arr = np.ascontiguousarray(vectors, dtype=np.float32)
        if arr.ndim != 2 or arr.shape[0] != rows:
            raise InvalidQueryError(f"vectors must have shape ({rows}, dim), got {arr.shape}")
        if arr.shape[1] != self.dim:
            raise EmbedderMismatchError(
                f"vectors have dimension {arr.shape[1]}, the index holds {self.dim} "
                f"({self.model_id!r})"
            )
        bad = ~np.isfinite(arr).all(axis=1) | (np.abs(arr).sum(axis=1) == 0)
        if bad.any():
            raise OctomemError(
                f"{int(bad.sum())} vectors are zero or not finite (row {int(np.argmax(bad))}); "
                "cosine similarity needs non-zero finite vectors"
            )
        return arr

    def add(self, tx: apsw.Connection, chunk_ids: Sequence[int], vectors: np.ndarray) -> None:
        """Store ``vectors[i]`` for ``chunk_ids[i]`` inside ``tx``, replacing older vectors.

        :param vectors: ``(len(chunk_ids), dim)`` float32, unit L2 norm per row.
        Chunks no longer stored (deleted while they were being embedded) are skipped.

        :raises OctomemError: :meth:`bind` was not called, or a row is zero or not finite.
        :raises EmbedderMismatchError: ``vectors`` has another dimension than the index.
        :raises InvalidQueryError: the number of rows differs from ``len(chunk_ids)``.
        """
        if not chunk_ids:
            return
        if not self._load_binding(tx):
            raise OctomemError("the sqlite-vec index is not bound to an embedder; bind() first")
        arr = self._checked(vectors, len(chunk_ids))
        ids = [int(i) for i in chunk_ids]
        rows: list[Any] = tx.execute(
            "SELECT id, kind, created_at FROM chunks WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(ids),)).fetchall()
        fields = {cid: (kind, created) for cid, kind, created in rows}
        for chunk_id, vector in zip(ids, arr, strict=True):
            if chunk_id not in fields:
                continue
            tx.execute(f"DELETE FROM {TABLE} WHERE chunk_id = ?", (chunk_id,))
            tx.execute(
                f"INSERT INTO {TABLE} (chunk_id, embedding, kind, created_at) VALUES (?, ?, ?, ?)",
                (chunk_id, vector.tobytes(), *fields[chunk_id]))

    def remove(self, tx: apsw.Connection, chunk_ids: Sequence[int]) -> None:
        """Drop the vectors of these chunks inside ``tx``; ids without a vector are ignored."""
        if not self._load_binding(tx):
            return
        for chunk_id in chunk_ids:
            tx.execute(f"DELETE FROM {TABLE} WHERE chunk_id = ?", (int(chunk_id),))

    def missing(self, limit: int | None = None) -> list[int]:
        """Return ids of stored chunks that have no vector yet, ascending.

        :param limit: at most this many ids; ``None`` for all.
        """
        conn = self.storage.connection()
        lim = -1 if limit is None else max(int(limit), 0)
        if not self._load_binding(conn):
            return [r[0] for r in conn.execute("SELECT id FROM chunks ORDER BY id LIMIT ?", (lim,))]
        return [r[0] for r in conn.execute(
            f"SELECT c.id FROM chunks AS c WHERE NOT EXISTS "
            f"(SELECT 1 FROM {TABLE} AS v WHERE v.chunk_id = c.id) ORDER BY c.id LIMIT ?", (lim,))]

    def vectors(self, chunk_ids: Sequence[int]) -> np.ndarray:
        """Return the stored vectors of these chunks.

        :returns: ``(len(chunk_ids), dim)`` float32, a zero row where a chunk has no
            vector; ``(len(chunk_ids), 0)`` while the index is unbound.
        """
        conn = self.storage.connection()
        if not self._load_binding(conn):
            return np.zeros((len(chunk_ids), 0), dtype=np.float32)
        out = np.zeros((len(chunk_ids), self.dim or 0), dtype=np.float32)
        for i, chunk_id in enumerate(chunk_ids):
            row = conn.execute(
                f"SELECT embedding FROM {TABLE} WHERE chunk_id = ?", (int(chunk_id),)).fetchone()
            if row is not None:
                out[i] = np.frombuffer(row[0], dtype=np.float32)
        return out

    def search(self, vector: np.ndarray, filters: Filters, k: int) -> Run:
        """Return the ``k`` chunks passing ``filters`` nearest to ``vector`` by cosine.

        :param vector: ``(dim,)`` float32 unit-norm query vector.
        :param filters: applied inside the KNN (see the module docstring).
        :param k: number of hits, >= 1; clamped to :data:`KNN_MAX_K`.
        :returns: hits best first with 1-based ranks; score = 1 - cosine distance = cosine
            similarity in [-1, 1]; empty when unbound or ``vector`` is zero.
        :raises EmbedderMismatchError: ``vector`` has another dimension than the index.
        """
        conn = self.storage.connection()
        if k < 1 or not self._load_binding(conn):
            return []
        query = np.ascontiguousarray(vector, dtype=np.float32).reshape(-1)
        if query.shape != (self.dim,):
            raise EmbedderMismatchError(
                f"query vector has shape {query.shape}, the index holds {self.dim}-dimensional "
                f"vectors of {self.model_id!r}"
            )
        if not np.isfinite(query).all() or not query.any():
            return []
        sql, params = knn_sql(filters)
        rows: list[Any] = conn.execute(
            sql, [query.tobytes(), min(int(k), KNN_MAX_K), *params]).fetchall()
        scored = sorted(
            ((cid, 1.0 - float(d)) for cid, d in rows if d is not None), key=lambda h: (-h[1], h[0])
        )
        return [Hit(cid, score, rank, NAME) for rank, (cid, score) in enumerate(scored, 1)]


def build(options: NoOptions, context: ArmContext) -> SqliteVecSemanticArm:
    """Build the arm over ``context.storage``.

    :raises IncompatibleArmsError: the storage is not ``sqlite``.
    """
    return SqliteVecSemanticArm(context.storage)


@hookimpl
def octomem_register_semantic_arms() -> list[ArmSpec]:
    """Offer the ``sqlite-vec`` semantic arm (requires the ``sqlite`` storage)."""
    return [
        ArmSpec(
            kind="semantic", name=NAME, factory=build, options_model=NoOptions,
            requires_storage=frozenset({"sqlite"}),
            description="exact cosine KNN in a sqlite-vec vec0 table, filters inside the KNN",
        )
    ]
