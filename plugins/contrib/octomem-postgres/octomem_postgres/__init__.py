"""octomem-postgres: storage, keyword and semantic arms on PostgreSQL with pgvector.

Three arms, registered through the entry point ``postgres = "octomem_postgres"`` in group
``octomem``:

- storage ``postgres`` (:mod:`.storage`): documents and chunks in tables, one schema per
  scope, with statement history, recall counters and the forget log;
- keyword arm ``postgres-fts`` (:mod:`.keyword`): a ``tsvector`` with a GIN index,
  ranked by ``ts_rank`` or ``ts_rank_cd`` (not BM25);
- semantic arm ``pgvector`` (:mod:`.semantic`): HNSW cosine KNN with filters inside the
  query and iterative index scans.

Select them with ``pipeline.storage = "postgres"``, ``pipeline.keyword = "postgres-fts"``,
``pipeline.semantic = "pgvector"`` and give ``arms.postgres.uri``.
"""

from __future__ import annotations

from octomem.engine.arms import ArmContext, ArmSpec
from octomem.engine.hookspecs import hookimpl

from . import keyword, semantic
from .storage import NAME as STORAGE_NAME
from .storage import PostgresStorage, PostgresStorageOptions, store_exists

__version__ = "0.1.0"
__all__ = ["PostgresStorage", "PostgresStorageOptions", "__version__"]

_ONLY_POSTGRES = frozenset({STORAGE_NAME})


def _build_storage(options: PostgresStorageOptions, context: ArmContext) -> PostgresStorage:
    return PostgresStorage(options, context.root)


@hookimpl
def octomem_register_storages() -> list[ArmSpec]:
    """Offer the ``postgres`` storage."""
    return [ArmSpec(
        kind="storage", name=STORAGE_NAME, factory=_build_storage,
        options_model=PostgresStorageOptions, store_exists=store_exists,
        description="PostgreSQL (psycopg 3), one schema per scope; needs arms.postgres.uri",
    )]


@hookimpl
def octomem_register_keyword_arms() -> list[ArmSpec]:
    """Offer the ``postgres-fts`` keyword arm (requires the ``postgres`` storage)."""
    return [ArmSpec(
        kind="keyword", name=keyword.NAME, factory=keyword.build,
        options_model=keyword.PostgresFtsOptions, requires_storage=_ONLY_POSTGRES,
        description="PostgreSQL full-text search (tsvector + GIN), ts_rank or ts_rank_cd "
        "(not BM25)",
    )]


@hookimpl
def octomem_register_semantic_arms() -> list[ArmSpec]:
    """Offer the ``pgvector`` semantic arm (requires the ``postgres`` storage)."""
    return [ArmSpec(
        kind="semantic", name=semantic.NAME, factory=semantic.build,
        options_model=semantic.PgvectorOptions, requires_storage=_ONLY_POSTGRES,
        description="pgvector HNSW cosine KNN (one table per embedder), filters inside the "
        "query with iterative scans",
    )]
