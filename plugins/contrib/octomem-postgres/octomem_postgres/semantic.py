"""The ``pgvector`` semantic arm: cosine KNN over pgvector HNSW indexes in the ``postgres`` storage.

Vector sets, as in the ``sqlite-vec`` arm: the table ``vector_sets`` registers one table
per embedder identity ``(model_id, dim)``, named ``vec_`` + 16 hex digits of the sha256
of model id and dimension, holding one ``vector(dim)`` per chunk (a foreign key to
``chunks``, so deleting a chunk deletes its vectors). :meth:`PgvectorSemanticArm.bind`
selects the configured embedder's set, creating it on first use; switching back to an
embedder used before finds its vectors where they were, and two models' vectors are
never compared.

Index: HNSW (Malkov & Yashunin, "Efficient and robust approximate nearest neighbor
search using Hierarchical Navigable Small World graphs", IEEE TPAMI 2020) over
``vector_cosine_ops``, built with ``m`` and ``ef_construction`` (pgvector's defaults,
16 and 64). Search is approximate: ``hnsw.ef_search`` (default 100 here, pgvector's own
default is 40) candidates are kept per query; higher is slower and closer to exact.
Vectors of more than 2000 dimensions (pgvector's HNSW limit for ``vector``) are stored
without an index and searched exactly.

Filters are applied *inside* the KNN: the query joins ``chunks`` and puts every filter in
its ``WHERE`` clause, with ``hnsw.iterative_scan = relaxed_order`` (pgvector >= 0.8), so
when a selective filter rejects the nearest rows the index scan goes on walking the graph
until ``k`` rows pass (or ``hnsw.max_scan_tuples`` rows were visited) instead of
returning fewer than ``k``. ``relaxed_order`` may return rows slightly out of distance
order; the arm re-sorts them. A graph walk under a selective filter is approximate, and
it is the slow path too: when the filters match at most ``exact_below`` chunks (counted
first, stopping at the bound), the arm ranks exactly those chunks instead — the ``ORDER
BY`` is written so that the HNSW index cannot serve it, and the planner fetches the
matching rows through the ``chunks`` indexes. The score is ``1 - cosine distance``, the
cosine similarity in [-1, 1], higher is better.
"""

from __future__ import annotations

import hashlib
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from octomem.engine.arms import ArmContext
from octomem.engine.errors import EmbedderMismatchError, InvalidQueryError, OctomemError
from octomem.engine.types import Filters, Hit, Run

from .schema import counted_table_sql, lock_key
from .storage import PostgresStorage, filter_sql, require_postgres

if TYPE_CHECKING:  # numpy is imported where arrays are made: registering the plugin stays light
    import numpy as np

NAME = "pgvector"
SETS_TABLE = "vector_sets"
#: pgvector's largest dimension an HNSW index over ``vector`` accepts.
HNSW_MAX_DIM = 2000
#: Oldest pgvector with ``hnsw.iterative_scan`` (filters inside the KNN that still return k).
MIN_PGVECTOR = (0, 8, 0)
_EXTENSION_LOCK = lock_key("octomem-postgres:extension")

_SETS_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {SETS_TABLE} (
    model_id text NOT NULL, dim integer NOT NULL,
    table_name text NOT NULL UNIQUE,          -- the table holding this model's vectors
    created_at double precision NOT NULL,     -- seconds since the Unix epoch, UTC
    PRIMARY KEY (model_id, dim)
)"""


class PgvectorOptions(BaseModel, extra="forbid", defer_build=True, allow_inf_nan=False):
    """Options of the ``pgvector`` semantic arm (settings table ``[arms.pgvector]``)."""

    ef_search: int = Field(
        default=100, ge=1, le=1000,
        description="HNSW candidates kept per query (hnsw.ef_search): higher is slower, closer "
        "to exact", json_schema_extra={"group": "retrieval"},
    )
    iterative_scan: Literal["relaxed_order", "strict_order", "off"] = Field(
        default="relaxed_order",
        description="hnsw.iterative_scan: keep scanning the index until k rows pass the "
        "filters ('off': a selective filter may return fewer than k)",
        json_schema_extra={"group": "retrieval"},
    )
    max_scan_tuples: int = Field(
        default=20_000, ge=1, le=10_000_000,
        description="hnsw.max_scan_tuples: most index rows one iterative scan visits",
        json_schema_extra={"group": "retrieval"},
    )
    exact_below: int = Field(
        default=5000, ge=0, le=1_000_000,
        description="a filtered search whose filters match at most this many chunks scans "
        "them exactly instead of walking the HNSW graph (0: never)",
        json_schema_extra={"group": "retrieval"},
    )
    m: int = Field(default=16, ge=2, le=100, description="HNSW links per node (index build)")
    ef_construction: int = Field(
        default=64, ge=4, le=1000, description="HNSW candidate list while building the index"
    )


@dataclass(frozen=True, slots=True)
class VectorSet:
    """The vectors of one embedder: its identity and the table that holds them."""

    model_id: str
    dim: int
    table: str
    created_at: float


def vector_table_name(model_id: str, dim: int) -> str:
    """Return the table name of a vector set: ``vec_`` + 16 hex digits of a sha256."""
    digest = hashlib.sha256(f"{model_id}\x1f{int(dim)}".encode()).hexdigest()
    return f"vec_{digest[:16]}"


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".") if p.isdigit())


def ensure_extension(tx: Any, where: str) -> None:
    """Create the ``vector`` extension in schema ``public`` unless it exists, and check
    that it is recent enough (:data:`MIN_PGVECTOR`, for iterative index scans).

    :raises OctomemError: it is missing and this role may not create it, or it is older.
    """
    row = tx.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    if row is None:
        import psycopg  # only here: importing this plugin does not load psycopg

        tx.execute("SELECT pg_advisory_xact_lock(%s)", (_EXTENSION_LOCK,))
        try:
            with tx.transaction():
                tx.execute("CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public")
        except psycopg.Error as exc:
            raise OctomemError(
                f"the pgvector extension is not installed in {where} and this role cannot "
                f"create it ({str(exc).strip()}); install pgvector on the server and run "
                "`CREATE EXTENSION vector;` as a superuser in that database") from exc
        row = tx.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()
    if _version(str(row[0])) < MIN_PGVECTOR:
        raise OctomemError(
            f"pgvector {row[0]} in {where} is older than "
            f"{'.'.join(map(str, MIN_PGVECTOR))}, which the pgvector arm needs for iterative "
            "index scans; run `ALTER EXTENSION vector UPDATE;` after upgrading pgvector")


def vector_sets(conn: Any) -> list[VectorSet]:
    """Return every registered vector set, oldest first (empty before the first bind)."""
    if conn.execute("SELECT to_regclass(%s)", (SETS_TABLE,)).fetchone()[0] is None:
        return []
    rows = conn.execute(f"SELECT model_id, dim, table_name, created_at FROM {SETS_TABLE} "
                        "ORDER BY created_at, table_name").fetchall()
    return [VectorSet(str(m), int(d), str(t), float(c)) for m, d, t, c in rows]


class PgvectorSemanticArm:
    """Cosine KNN over per-embedder pgvector tables with HNSW indexes, beside the chunks.

    Unbound until :meth:`bind` selects an embedder's vector set: then search finds
    nothing and every chunk counts as missing.

    :raises IncompatibleArmsError: ``storage`` is not the ``postgres`` storage.
    :raises OctomemError: pgvector is not installed and cannot be created.
    """

    name = NAME

    def __init__(self, storage: Any, options: PgvectorOptions | None = None) -> None:
        self.storage: PostgresStorage = require_postgres(storage, NAME)
        self.options = options or PgvectorOptions()
        self.bound: VectorSet | None = None
        with self.storage.transaction() as tx:
            ensure_extension(tx, self.storage.where)
        self._configured: weakref.WeakSet[Any] = weakref.WeakSet()
        self.storage.add_connect_hook(self._configure)

    def _configure(self, conn: Any) -> None:
        """Register pgvector's numpy adapter and set the HNSW search options on ``conn``."""
        if conn in self._configured:
            return
        from pgvector.psycopg import register_vector

        register_vector(conn)
        o = self.options
        conn.execute(f"SET hnsw.ef_search = {int(o.ef_search)}")
        conn.execute(f"SET hnsw.iterative_scan = {o.iterative_scan}")
        conn.execute(f"SET hnsw.max_scan_tuples = {int(o.max_scan_tuples)}")
        self._configured.add(conn)

    def _conn(self) -> Any:
        conn = self.storage.connection()
        self._configure(conn)
        return conn

    @property
    def model_id(self) -> str | None:
        """Model id of the bound vector set, or ``None``."""
        return self.bound.model_id if self.bound else None

    @property
    def dim(self) -> int | None:
        """Dimension of the bound vector set, or ``None``."""
        return self.bound.dim if self.bound else None

    def _create_set(self, tx: Any, model_id: str, dim: int) -> tuple[str, float]:
        table, created = vector_table_name(model_id, dim), time.time()
        tx.execute(f"INSERT INTO {SETS_TABLE} (model_id, dim, table_name, created_at) "
                   "VALUES (%s, %s, %s, %s)", (model_id, int(dim), table, created))
        tx.execute(f"CREATE TABLE {table} (chunk_id bigint PRIMARY KEY REFERENCES chunks (id) "
                   f"ON DELETE CASCADE, embedding public.vector({int(dim)}) NOT NULL)")
        tx.execute(counted_table_sql(table))
        if dim <= HNSW_MAX_DIM:
            tx.execute(f"CREATE INDEX {table}_hnsw ON {table} USING hnsw "
                       f"(embedding public.vector_cosine_ops) WITH (m = {int(self.options.m)}, "
                       f"ef_construction = {int(self.options.ef_construction)})")
        return table, created

    def bind(self, tx: Any, model_id: str, dim: int) -> None:
        """Select the vector set of ``(model_id, dim)``, creating its table on first use.

        Sets of other embedders stay as they are (switching back finds them); nothing
        is compared across sets.

        :raises InvalidQueryError: ``dim`` < 1 or ``model_id`` is empty.
        """
        if int(dim) < 1 or not model_id:
            raise InvalidQueryError(f"bind needs a model id and dim >= 1, got {model_id!r}, {dim}")
        self._configure(tx)
        tx.execute(_SETS_SCHEMA)
        row = tx.execute(f"SELECT table_name, created_at FROM {SETS_TABLE} "
                         "WHERE model_id = %s AND dim = %s", (model_id, int(dim))).fetchone()
        table, created = row if row is not None else self._create_set(tx, model_id, int(dim))
        self.bound = VectorSet(model_id, int(dim), str(table), float(created))

    def vector_sets(self) -> list[VectorSet]:
        """Return every embedder's vector set in this scope, oldest first."""
        return vector_sets(self._conn())

    def _checked(self, vectors: np.ndarray, rows: int, bound: VectorSet) -> np.ndarray:
        import numpy as np

        arr = np.ascontiguousarray(vectors, dtype=np.float32)
        if arr.ndim != 2 or arr.shape[0] != rows:
            raise InvalidQueryError(f"vectors must have shape ({rows}, dim), got {arr.shape}")
        if arr.shape[1] != bound.dim:
            raise EmbedderMismatchError(
                f"vectors have dimension {arr.shape[1]}, the bound vector set holds {bound.dim} "
                f"({bound.model_id!r})")
        bad = ~np.isfinite(arr).all(axis=1) | (np.abs(arr).sum(axis=1) == 0)
        if bad.any():
            raise OctomemError(
                f"{int(bad.sum())} vectors are zero or not finite (row {int(np.argmax(bad))}); "
                "cosine similarity needs non-zero finite vectors")
        return arr

    def add(self, tx: Any, chunk_ids: Sequence[int], vectors: np.ndarray) -> None:
        """Store ``vectors[i]`` for ``chunk_ids[i]`` in the bound set inside ``tx``, replacing
        older vectors of the same model; chunks no longer stored are skipped.

        :param vectors: ``(len(chunk_ids), dim)`` float32, unit L2 norm per row.
        :raises OctomemError: :meth:`bind` was not called, or a row is zero or not finite.
        :raises EmbedderMismatchError: ``vectors`` has another dimension than the bound set.
        :raises InvalidQueryError: the number of rows differs from ``len(chunk_ids)``.
        """
        if not len(chunk_ids):
            return
        bound = self.bound
        if bound is None:
            raise OctomemError("the pgvector index is not bound to an embedder; bind() first")
        arr = self._checked(vectors, len(chunk_ids), bound)
        self._configure(tx)
        with tx.cursor() as cur:
            cur.executemany(
                f"INSERT INTO {bound.table} (chunk_id, embedding) SELECT c.id, %s FROM chunks "
                "AS c WHERE c.id = %s ON CONFLICT (chunk_id) DO UPDATE "
                "SET embedding = EXCLUDED.embedding",
                [(row, int(cid)) for cid, row in zip(chunk_ids, arr, strict=True)])

    def remove(self, tx: Any, chunk_ids: Sequence[int]) -> None:
        """Drop the vectors of these chunks from every vector set inside ``tx``.

        Ids without a vector are ignored; works unbound too.
        """
        if not len(chunk_ids):
            return
        ids = [int(i) for i in chunk_ids]
        for vset in vector_sets(tx):
            tx.execute(f"DELETE FROM {vset.table} WHERE chunk_id = ANY(%s)", (ids,))

    def missing(self, limit: int | None = None) -> list[int]:
        """Return ids of stored chunks with no vector in the bound set, ascending.

        :param limit: at most this many ids; ``None`` for all.
        :returns: every chunk id while unbound.
        """
        lim = None if limit is None else max(int(limit), 0)
        conn = self._conn()
        if self.bound is None:
            rows = conn.execute("SELECT id FROM chunks ORDER BY id LIMIT %s", (lim,))
            return [r[0] for r in rows]
        return [r[0] for r in conn.execute(
            f"SELECT c.id FROM chunks AS c WHERE NOT EXISTS (SELECT 1 FROM {self.bound.table} "
            "AS v WHERE v.chunk_id = c.id) ORDER BY c.id LIMIT %s", (lim,))]

    def missing_count(self) -> int:
        """Return how many stored chunks have no vector in the bound set (all while unbound).

        Chunks minus the set's vectors, both read from trigger-kept counters (no scan).
        """
        chunks = self.storage.row_count("chunks")
        if self.bound is None:
            return chunks
        return max(chunks - self.storage.row_count(self.bound.table), 0)

    def vectors(self, chunk_ids: Sequence[int]) -> np.ndarray:
        """Return the bound set's vectors of these chunks.

        :returns: ``(len(chunk_ids), dim)`` float32, a zero row where a chunk has no
            vector; ``(len(chunk_ids), 0)`` while unbound.
        """
        import numpy as np

        bound = self.bound
        if bound is None:
            return np.zeros((len(chunk_ids), 0), dtype=np.float32)
        out = np.zeros((len(chunk_ids), bound.dim), dtype=np.float32)
        if not len(chunk_ids):
            return out
        rows = self._conn().execute(
            f"SELECT chunk_id, embedding FROM {bound.table} WHERE chunk_id = ANY(%s)",
            ([int(i) for i in chunk_ids],)).fetchall()
        found = {int(cid): emb for cid, emb in rows}
        for i, chunk_id in enumerate(chunk_ids):
            if int(chunk_id) in found:
                out[i] = found[int(chunk_id)].to_numpy()
        return out

    def _few_match(self, conn: Any, filters: Filters, where: str, params: list[Any]) -> bool:
        """True when restricting ``filters`` match at most ``exact_below`` chunks."""
        limit = self.options.exact_below
        if limit <= 0 or filters.is_empty():
            return False
        row = conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM chunks AS c WHERE {where} "
                           "LIMIT %s) AS m", [*params, limit + 1]).fetchone()
        return int(row[0]) <= limit

    def search(self, vector: np.ndarray, filters: Filters, k: int) -> Run:
        """Return the ``k`` chunks passing ``filters`` nearest to ``vector`` by cosine.

        Searches the bound vector set only: chunks without a vector of this model are
        not candidates (keyword arms still find them).

        :param vector: ``(dim,)`` float32 unit-norm query vector.
        :param filters: applied inside the KNN (see the module docstring).
        :param k: number of hits, >= 1.
        :returns: hits best first with 1-based ranks; score = 1 - cosine distance = cosine
            similarity in [-1, 1]; empty when unbound or ``vector`` is zero.
        :raises EmbedderMismatchError: ``vector`` has another dimension than the bound set.
        """
        import numpy as np

        bound = self.bound
        if k < 1 or bound is None:
            return []
        query = np.ascontiguousarray(vector, dtype=np.float32).reshape(-1)
        if query.shape != (bound.dim,):
            raise EmbedderMismatchError(
                f"query vector has shape {query.shape}, the bound vector set holds "
                f"{bound.dim}-dimensional vectors of {bound.model_id!r}")
        if not np.isfinite(query).all() or not query.any():
            return []
        where, params = filter_sql(filters, "c")
        conn = self._conn()
        # "+ 0": an ORDER BY the HNSW index cannot serve, so the few matching rows are ranked
        order = "(v.embedding <=> %(q)s) + 0" if self._few_match(conn, filters, where, params) \
            else "v.embedding <=> %(q)s"
        rows = conn.execute(
            f"SELECT v.chunk_id, v.embedding <=> %(q)s AS distance FROM {bound.table} AS v "
            f"JOIN chunks AS c ON c.id = v.chunk_id WHERE {_named(where)} "
            f"ORDER BY {order} LIMIT %(k)s",
            {"q": query, "k": int(k), **{f"p{i}": p for i, p in enumerate(params)}}).fetchall()
        scored = sorted(((int(cid), 1.0 - float(d)) for cid, d in rows if d is not None),
                        key=lambda h: (-h[1], h[0]))
        return [Hit(cid, score, rank, NAME) for rank, (cid, score) in enumerate(scored, 1)]


def _named(where: str) -> str:
    """Turn the positional ``%s`` placeholders of a filter fragment into ``%(p0)s``, ..."""
    parts = where.split("%s")
    return "".join(p + (f"%(p{i})s" if i < len(parts) - 1 else "") for i, p in enumerate(parts))


def build(options: PgvectorOptions, context: ArmContext) -> PgvectorSemanticArm:
    """Build the arm over ``context.storage``.

    :raises IncompatibleArmsError: the storage is not ``postgres``.
    """
    return PgvectorSemanticArm(context.storage, options)
