"""The PostgreSQL arms pass octomem's conformance kit against a real server from the wheel."""

from __future__ import annotations

import pytest

pytest.importorskip("octomem_postgres")

from octomem.engine.testing import KeywordSuite, SemanticSuite, StorageSuite  # noqa: E402


class TestPostgresStorage(StorageSuite):
    """Storage and VersionedStorage contracts."""

    STORAGE = "postgres"


class TestPostgresFts(KeywordSuite):
    """KeywordArm and validity contracts."""

    ARM, STORAGE = "postgres-fts", "postgres"


class TestPostgresFtsCoverDensity(KeywordSuite):
    """The same contracts with the other ranking function."""

    ARM, STORAGE = "postgres-fts", "postgres"
    OPTIONS = {"postgres-fts": {"ranking": "ts_rank_cd"}}


class TestPgvector(SemanticSuite):
    """SemanticArm and validity contracts."""

    ARM, STORAGE = "pgvector", "postgres"
