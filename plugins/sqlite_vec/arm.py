"""The ``sqlite-vec`` semantic arm: exact cosine KNN over vec0 tables in the ``sqlite`` storage.

Each embedder's vectors live in their own vec0 virtual table (sqlite-vec >= 0.1.6), one
float32 vector per chunk keyed by chunk id, with ``distance_metric=cosine``; the score is
``1 - distance``, the cosine similarity in [-1, 1], higher is better. Search is brute
force (exact), not approximate.

Vector sets: the table ``vector_sets`` registers one vec0 table per embedder identity
``(model_id, dim)`` with its creation time; the table is named ``vec_`` + 16 hex digits
of the sha256 of model id and dimension (:func:`vector_table_name`).
:meth:`SqliteVecSemanticArm.bind` selects the set of the configured embedder, creating it
on first use; every read and write then touches that set only, so vectors of two models
are never compared, and switching back to an embedder used before finds its vectors
where they were. Removing a chunk removes its vector from every set. An index written
before vector sets existed (one ``vec_chunks`` table, its model recorded in ``meta``) is
adopted as the set of that model.

Filters are applied *inside* the KNN, never by post-filtering a top-k:

- ``kind`` and ``created_at`` are vec0 *metadata columns*, so ``kind IN (...)``,
  ``created_at >= ?`` and ``created_at < ?`` are constraints vec0 evaluates while it
  selects the k nearest rows;
- tags and metadata go in ``chunk_id IN (SELECT id FROM chunks WHERE ...)``: vec0 takes
  a ``rowid IN`` constraint on a KNN query (via ``sqlite3_vtab_in``) and scores only the
  listed rows; so do ``since``/``until``/``as_of`` and ``include_superseded`` (validity
  lives in ``chunks``);
- the default current-only rule, when it is the only rule left, costs nothing while no
  chunk is superseded: the KNN asks for ``k`` plus the number of superseded chunks and
  drops those (exact, because at most that many of the nearest can be superseded); past
  :data:`KNN_MAX_K` it goes in the ``chunk_id IN`` subquery instead.

Limits of sqlite-vec 0.1.9: ``k`` is at most 4096 per query (larger ``k`` is clamped);
a zero vector has no cosine distance (NULL), so zero or non-finite vectors are refused.

How a search scans (option ``scan``, settings ``[arms.sqlite-vec]``):

- ``"numpy"``: an exact scan of an in-RAM float32 copy of the bound set
  (:class:`~octomem.plugins.sqlite_vec.matrix.VectorMatrix`), kept in step with the vec0
  table through a change log written in the same transactions
  (:mod:`~octomem.plugins.sqlite.changelog`). The same filters apply inside the scan:
  kind and creation time as numpy masks, everything else as the set of chunk ids the
  ``chunks`` table allows. Same hits as ``"vec0"`` below ``approximate_above`` vectors
  and for filtered searches; past it an unfiltered search ranks candidates by a
  projection first (:class:`.projection.Projection`); ~10x faster at 100k (scale curve,
  ``docs/benchmarks.md``). The first search of a process loads the set (one table
  scan, ~0.5-1 s per 100k vectors on 2 cores, ~15 s at 1M).
- ``"vec0"``: sqlite-vec's own KNN query, as described above; no RAM copy.
- ``"warm"`` (default): ``"numpy"`` once a long-running process has loaded the copy
  (:meth:`SqliteVecSemanticArm.warm`: the MCP server before its first recall,
  ``octomem bench`` before timing), ``"vec0"`` until then. A one-shot CLI call asks
  one query, for which loading costs more than vec0's KNN (first search 1.0 s against
  0.16 s at 100k realistic vectors, 14.7 s against 1.0 s at 1M).

The in-RAM copies (``warm``, ``prepare``, which search scans them) are a mixin of the
arm's, :mod:`.in_ram`.
"""

from __future__ import annotations

import json
import time
import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import apsw

from octomem.engine.arms import ArmContext, ArmSpec
from octomem.engine.errors import EmbedderMismatchError, InvalidQueryError, OctomemError
from octomem.engine.hookspecs import hookimpl
from octomem.engine.types import Filters, Hit, Run
from octomem.plugins.sqlite.storage import SqliteStorage, require_sqlite

from ..sqlite import changelog as vector_log
from .in_ram import InRamCopies
from .options import SqliteVecOptions
from .tables import (
    _SETS_SCHEMA,
    KNN_MAX_K,
    LEGACY_META_DIM,
    LEGACY_META_MODEL_ID,
    LEGACY_TABLE,
    SETS_TABLE,
    VEC0_CHUNK_SIZE,
    VectorSet,
    _adopt_legacy,
    _current_only,
    _exists,
    chunk_fields,
    knn_sql,
    vector_sets,
    vector_table_name,
)
from .vec0_writer import insert_new

if TYPE_CHECKING:  # numpy and the in-RAM copy are imported where vectors are handled, so
    # building the arm (`octomem status`) imports neither
    import numpy as np

    from .matrix import VectorMatrix
    from .subsets import SubsetCache

NAME = "sqlite-vec"


class SqliteVecSemanticArm(InRamCopies):
    """Cosine KNN over per-embedder vec0 tables stored beside the chunks in ``sqlite``.

    Unbound until :meth:`bind` selects an embedder's vector set: then search finds
    nothing and every chunk counts as missing.

    :param storage: the ``sqlite`` storage; vectors are written through its transactions.
    :raises IncompatibleArmsError: ``storage`` is not the ``sqlite`` storage.
    """

    name = NAME

    def __init__(self, storage: Any, options: SqliteVecOptions | None = None) -> None:
        self.storage: SqliteStorage = require_sqlite(storage, NAME)
        self.options = options or SqliteVecOptions()
        self.bound: VectorSet | None = None
        self._matrices: dict[str, VectorMatrix] = {}
        self._subsets: dict[str, SubsetCache] = {}  # per vector set, under its matrix's lock
        #: per connection: ((data_version, total_changes, table), missing count)
        self._missing: weakref.WeakKeyDictionary[apsw.Connection, tuple[tuple[Any, ...], int]] = (
            weakref.WeakKeyDictionary())

    @property
    def model_id(self) -> str | None:
        """Model id of the bound vector set, or ``None``."""
        return self.bound.model_id if self.bound else None

    @property
    def dim(self) -> int | None:
        """Dimension of the bound vector set, or ``None``."""
        return self.bound.dim if self.bound else None

    def bind(self, tx: apsw.Connection, model_id: str, dim: int) -> None:
        """Select the vector set of ``(model_id, dim)``, creating its vec0 table on first use.

        Sets of other embedders stay as they are (switching back finds them); nothing
        is compared across sets.

        :param dim: vector dimension, >= 1.
        :raises InvalidQueryError: ``dim`` < 1 or ``model_id`` is empty.
        """
        if int(dim) < 1 or not model_id:
            raise InvalidQueryError(f"bind needs a model id and dim >= 1, got {model_id!r}, {dim}")
        tx.execute(_SETS_SCHEMA)
        vector_log.create(tx)
        _adopt_legacy(tx)
        row = tx.execute(
            f"SELECT table_name, created_at FROM {SETS_TABLE} WHERE model_id = ? AND dim = ?",
            (model_id, int(dim))).fetchone()
        if row is None:
            row = (vector_table_name(model_id, dim), time.time())
            tx.execute(
                f"INSERT INTO {SETS_TABLE} (model_id, dim, table_name, created_at) "
                "VALUES (?, ?, ?, ?)", (model_id, int(dim), *row))
        table = str(row[0])
        tx.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING vec0(chunk_id INTEGER PRIMARY KEY, "
            f"embedding float[{int(dim)}] distance_metric=cosine, kind TEXT, created_at FLOAT, "
            f"chunk_size={VEC0_CHUNK_SIZE})"
        )
        self.bound = VectorSet(model_id, int(dim), table, float(row[1]))

    def vector_sets(self) -> list[VectorSet]:
        """Return every embedder's vector set in this storage, oldest first."""
        return vector_sets(self.storage.connection())

    def reset(self, tx: apsw.Connection) -> None:
        """Drop every vector set (all models' vectors) inside ``tx``; the arm becomes unbound."""
        for vset in vector_sets(tx):
            tx.execute(f"DROP TABLE IF EXISTS {vset.table}")
            vector_log.record_drop(tx, vset.table)
        tx.execute(f"DROP TABLE IF EXISTS {SETS_TABLE}")
        tx.execute(f"DROP TABLE IF EXISTS {LEGACY_TABLE}")
        tx.execute("DELETE FROM meta WHERE key IN (?, ?)", (LEGACY_META_MODEL_ID, LEGACY_META_DIM))
        self.bound = None

    def _checked(self, vectors: np.ndarray, rows: int, bound: VectorSet) -> np.ndarray:
        """Return ``vectors`` as C-contiguous float32 ``(rows, dim)``, or raise."""
        import numpy as np

        arr = np.ascontiguousarray(vectors, dtype=np.float32)
        if arr.ndim != 2 or arr.shape[0] != rows:
            raise InvalidQueryError(f"vectors must have shape ({rows}, dim), got {arr.shape}")
        if arr.shape[1] != bound.dim:
            raise EmbedderMismatchError(
                f"vectors have dimension {arr.shape[1]}, the bound vector set holds {bound.dim} "
                f"({bound.model_id!r})"
            )
        # squared norms: finite and non-zero only when every value of the row is finite and
        # one is not zero (one pass instead of four: the 10k ingest benchmark's 40 batches
        # of 256 x 384, 7.1 -> 4.2 ms); otherwise (a square that overflows or underflows
        # float32, or a bad row) every row is checked value by value
        squares = np.einsum("ij,ij->i", arr, arr)
        if np.isfinite(squares).all() and squares.all():
            return arr
        bad = ~np.isfinite(arr).all(axis=1) | (np.abs(arr).sum(axis=1) == 0)
        if bad.any():
            raise OctomemError(
                f"{int(bad.sum())} vectors are zero or not finite (row {int(np.argmax(bad))}); "
                "cosine similarity needs non-zero finite vectors"
            )
        return arr

    def add(self, tx: apsw.Connection, chunk_ids: Sequence[int], vectors: np.ndarray) -> None:
        """Store ``vectors[i]`` for ``chunk_ids[i]`` in the bound set inside ``tx``, replacing
        older vectors of the same model.

        :param vectors: ``(len(chunk_ids), dim)`` float32, unit L2 norm per row.
        Chunks no longer stored (deleted while they were being embedded) are skipped.

        :raises OctomemError: :meth:`bind` was not called, or a row is zero or not finite.
        :raises EmbedderMismatchError: ``vectors`` has another dimension than the bound set.
        :raises InvalidQueryError: the number of rows differs from ``len(chunk_ids)``.
        """
        if not chunk_ids:
            return
        bound = self.bound
        if bound is None:
            raise OctomemError("the sqlite-vec index is not bound to an embedder; bind() first")
        arr = self._checked(vectors, len(chunk_ids), bound)
        ids = [int(i) for i in chunk_ids]
        fields, present = chunk_fields(tx, bound.table, ids)
        written = [cid for cid in ids if cid in fields]
        if present is not None and written and present.isdisjoint(written) \
                and len(set(written)) == len(written):  # new vectors: whole blocks at once
            keep = arr if len(written) == len(ids) else arr[[cid in fields for cid in ids]]
            insert_new(tx, bound.table, written, keep, fields)
            vector_log.record(tx, bound.table, written, stored=True)  # read from chunks
            return
        rows = {cid: (cid, vector.tobytes(), *fields[cid])  # a repeated id: its last vector
                for cid, vector in zip(ids, arr, strict=True) if cid in fields}
        if rows:  # one statement each for the batch; only ids that hold a vector deleted
            old = [(c,) for c in rows if present is None or c in present]
            if old:
                tx.executemany(f"DELETE FROM {bound.table} WHERE chunk_id = ?", old)
            tx.executemany(f"INSERT INTO {bound.table} (chunk_id, embedding, kind, created_at) "
                           "VALUES (?, ?, ?, ?)", list(rows.values()))
        vector_log.record(tx, bound.table, written)

    def remove(self, tx: apsw.Connection, chunk_ids: Sequence[int]) -> None:
        """Drop the vectors of these chunks from every vector set inside ``tx``.

        Ids without a vector are ignored; works unbound too.
        """
        for vset in vector_sets(tx):
            for chunk_id in chunk_ids:
                tx.execute(f"DELETE FROM {vset.table} WHERE chunk_id = ?", (int(chunk_id),))
            vector_log.record(tx, vset.table, chunk_ids)

    def missing(self, limit: int | None = None) -> list[int]:
        """Return ids of stored chunks with no vector in the bound set, ascending.

        :param limit: at most this many ids; ``None`` for all.
        :returns: every chunk id while unbound.
        """
        conn = self.storage.connection()
        lim = -1 if limit is None else max(int(limit), 0)
        if self.bound is None:
            return [r[0] for r in conn.execute("SELECT id FROM chunks ORDER BY id LIMIT ?", (lim,))]
        return [r[0] for r in conn.execute(
            f"SELECT c.id FROM chunks AS c WHERE NOT EXISTS (SELECT 1 FROM {self.bound.table} "
            "AS v WHERE v.chunk_id = c.id) ORDER BY c.id LIMIT ?", (lim,))]

    def missing_count(self) -> int:
        """Return how many stored chunks have no vector in the bound set (all while unbound).

        Counted as chunks minus the set's vectors (two ``count(*)``, which walk b-tree
        pages: ~0.01 ms at 100k chunks, tens of ms at 1M): the vectors are counted in
        vec0's ``<table>_rowids`` shadow table (sqlite-vec 0.1.x), or by scanning the vec0
        table if that shadow table is absent. Every search asks, so the count is kept per
        connection until the database changes (``PRAGMA data_version`` for other
        connections' commits, ``total_changes()`` for this one's writes).
        """
        conn = self.storage.connection()
        table = self.bound.table if self.bound else None
        version = (conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes(), table)
        cached = self._missing.get(conn)
        if cached is not None and cached[0] == version:
            return cached[1]
        chunks = int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
        if table is None:
            return chunks
        counted = f"{table}_rowids" if _exists(conn, f"{table}_rowids") else table
        vectors = int(conn.execute(f"SELECT count(*) FROM {counted}").fetchone()[0])
        self._missing[conn] = (version, max(chunks - vectors, 0))
        return max(chunks - vectors, 0)

    def vectors(self, chunk_ids: Sequence[int]) -> np.ndarray:
        """Return the bound set's vectors of these chunks.

        :returns: ``(len(chunk_ids), dim)`` float32, a zero row where a chunk has no
            vector; ``(len(chunk_ids), 0)`` while unbound.
        """
        import numpy as np

        bound = self.bound
        if bound is None:
            return np.zeros((len(chunk_ids), 0), dtype=np.float32)
        if self._in_ram(bound):
            return self._matrix(bound).vectors(chunk_ids)
        ids = [int(c) for c in chunk_ids]
        rows = self.storage.connection().execute(
            f"SELECT chunk_id, embedding FROM {bound.table} "
            "WHERE chunk_id IN (SELECT value FROM json_each(?))", (json.dumps(ids),))
        found = {int(cid): blob for cid, blob in rows}
        out = np.zeros((len(ids), bound.dim), dtype=np.float32)
        for i, chunk_id in enumerate(ids):
            if chunk_id in found:
                out[i] = np.frombuffer(found[chunk_id], dtype=np.float32)
        return out

    def search(self, vector: np.ndarray, filters: Filters, k: int) -> Run:
        """Return the ``k`` chunks passing ``filters`` nearest to ``vector`` by cosine.

        Searches the bound vector set only: chunks without a vector of this model are
        not candidates (keyword arms still find them).

        :param vector: ``(dim,)`` float32 unit-norm query vector.
        :param filters: applied inside the KNN (see the module docstring).
        :param k: number of hits, >= 1; clamped to :data:`KNN_MAX_K`.
        :returns: hits best first with 1-based ranks; score = 1 - cosine distance = cosine
            similarity in [-1, 1]; empty when unbound or ``vector`` is zero.
        :raises EmbedderMismatchError: ``vector`` has another dimension than the bound set.
        """
        bound = self.bound
        if k < 1 or bound is None:
            return []
        scanning = _scan or _import_scan()
        checked = scanning.checked_query(vector, bound)
        if checked is None:
            return []
        query, norm = checked
        if self._in_ram(bound):
            return scanning.scan(self, bound, query, norm, filters, int(k))
        k = min(int(k), KNN_MAX_K)
        skip: set[int] = set()
        plain = _current_only(filters) and not (filters.tags or filters.metadata)
        if plain:  # drop superseded hits from an over-fetch instead of a subquery
            noncurrent = self.storage.noncurrent_chunk_ids(limit=KNN_MAX_K - k + 1)
            plain = len(noncurrent) <= KNN_MAX_K - k
            skip = set(noncurrent) if plain else set()
        sql, params = knn_sql(filters, bound.table, current_in_subquery=not plain)
        fetch = k + len(skip) if plain else k
        rows: list[Any] = self.storage.connection().execute(
            sql, [query.tobytes(), fetch, *params]).fetchall()
        scored = sorted(
            ((cid, 1.0 - float(d)) for cid, d in rows if d is not None and cid not in skip),
            key=lambda h: (-h[1], h[0]),
        )[:k]
        return [Hit(cid, score, rank, NAME) for rank, (cid, score) in enumerate(scored, 1)]


#: :mod:`.scan`, imported by the first search (it imports numpy, which building the arm
#: does not); a global read instead of an import statement per search (~1 us)
_scan: Any = None


def _import_scan() -> Any:
    global _scan
    from . import scan

    _scan = scan
    return scan


def build(options: SqliteVecOptions, context: ArmContext) -> SqliteVecSemanticArm:
    """Build the arm over ``context.storage``.

    :raises IncompatibleArmsError: the storage is not ``sqlite``.
    """
    return SqliteVecSemanticArm(context.storage, options)


@hookimpl
def octomem_register_semantic_arms() -> list[ArmSpec]:
    """Offer the ``sqlite-vec`` semantic arm (requires the ``sqlite`` storage)."""
    return [
        ArmSpec(
            kind="semantic", name=NAME, factory=build, options_model=SqliteVecOptions,
            requires_storage=frozenset({"sqlite"}),
            description="exact cosine KNN over sqlite-vec vec0 tables (one per embedder), "
            "scanned in RAM with numpy once warmed, filters inside the search",
        )
    ]
