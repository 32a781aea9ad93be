"""What the conformance kit does not cover: settings, scope separation, the indexes the
queries use, iterative scans under a selective filter, and the error messages."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

pytest.importorskip("octomem_postgres")

from octomem.engine.arms import ArmContext  # noqa: E402
from octomem.engine.errors import (  # noqa: E402
    ArmConfigError,
    IncompatibleArmsError,
    OctomemError,
)
from octomem.engine.manager import load_registry  # noqa: E402
from octomem.engine.memory.facade import Memory  # noqa: E402
from octomem.engine.pipeline import Pipeline  # noqa: E402
from octomem.engine.settings import load_settings  # noqa: E402
from octomem.engine.types import Chunk, Document, Filters  # noqa: E402
from octomem_postgres.keyword import PostgresFtsKeywordArm, PostgresFtsOptions  # noqa: E402
from octomem_postgres.schema import schema_name  # noqa: E402
from octomem_postgres.semantic import PgvectorOptions, PgvectorSemanticArm  # noqa: E402
from octomem_postgres.storage import PostgresStorage, PostgresStorageOptions  # noqa: E402


def _storage(uri: str, root: Path) -> PostgresStorage:
    return PostgresStorage(PostgresStorageOptions(uri=uri), root)


def _add(storage: PostgresStorage, *docs: Document) -> list[Chunk]:
    out: list[Chunk] = []
    with storage.transaction() as tx:
        for doc in docs:
            out += storage.add_document(tx, doc, [Chunk(doc.id, 0, doc.text)])
    return out


def test_registered_by_its_own_distribution() -> None:
    registry = load_registry()
    for kind, name in (("storage", "postgres"), ("keyword", "postgres-fts"),
                       ("semantic", "pgvector")):
        (provided,) = [p for p in registry.provided(kind) if p.spec.name == name]  # type: ignore[arg-type]
        assert provided.distribution == "octomem-postgres"
    assert registry.get("keyword", "postgres-fts").requires_storage == {"postgres"}
    assert registry.get("semantic", "pgvector").requires_storage == {"postgres"}


def test_the_uri_is_a_required_setting(tmp_path: Path) -> None:
    pipeline = {"storage": "postgres", "keyword": "postgres-fts", "semantic": "pgvector",
                "embedder": "hashing"}
    loaded = load_settings(overrides={"data_dir": str(tmp_path), "pipeline": pipeline},
                           read_user_config=False)
    with pytest.raises(ArmConfigError, match=r"arms\.postgres\.uri"):
        Pipeline(loaded, load_registry())


def test_fts5_on_postgres_is_refused_naming_both_arms(postgres_uri: str, tmp_path: Path) -> None:
    loaded = load_settings(overrides={
        "data_dir": str(tmp_path), "pipeline": {"storage": "postgres", "keyword": "fts5"},
        "arms": {"postgres": {"uri": postgres_uri}}}, read_user_config=False)
    with pytest.raises(IncompatibleArmsError, match="'fts5' needs storage 'sqlite'.*'postgres'"):
        Pipeline(loaded, load_registry())


def test_an_unreachable_server_is_one_line_without_the_password(free_port: int,
                                                                  tmp_path: Path) -> None:
    uri = f"postgresql://me:s3cret@127.0.0.1:{free_port}/db"
    with pytest.raises(OctomemError, match="cannot connect to PostgreSQL at me@127.0.0.1") as info:
        PostgresStorage(PostgresStorageOptions(uri=uri, connect_timeout_s=2), tmp_path)
    assert "s3cret" not in str(info.value) and "arms.postgres.uri" in str(info.value)


@pytest.fixture
def free_port() -> int:
    from octomem_postgres.embedded import free_port as pick

    return pick()


def test_one_schema_per_scope_root(postgres_uri: str, tmp_path: Path) -> None:
    local, other = tmp_path / "project" / ".octomem", tmp_path / "other" / ".octomem"
    a, b = _storage(postgres_uri, local), _storage(postgres_uri, other)
    try:
        assert a.schema == schema_name(local) and a.schema != b.schema
        assert a.schema.startswith("octomem_project_octomem_") and len(a.schema) <= 63
        assert a.get_meta("scope_root") == str(local.resolve())
        _add(a, Document("only in the project", id="x"))
        assert b.get_document("x") is None and b.counts() == {"documents": 0, "chunks": 0}
        again = _storage(postgres_uri, local)  # the same directory: the same schema
        assert again.get_document("x") is not None
        again.close()
    finally:
        a.close()
        b.close()
    deep = tmp_path / ("very-long-folder-name-" * 8) / ".octomem"
    assert len(schema_name(deep).encode()) <= 63


def test_nul_text_is_refused_with_a_message(postgres_uri: str, tmp_path: Path) -> None:
    storage = _storage(postgres_uri, tmp_path)
    try:
        with pytest.raises(OctomemError, match="NUL"):
            _add(storage, Document("a\x00b", id="nul"))
        assert storage.get_document("nul") is None and storage.find_documents("a\x00b") == []
    finally:
        storage.close()


def _explain(storage: PostgresStorage, sql: str, params: list[Any]) -> str:
    conn = storage.connection()
    with conn.transaction():
        conn.execute("SET LOCAL enable_seqscan = off")
        rows = conn.execute("EXPLAIN " + sql, params).fetchall()
    return "\n".join(r[0] for r in rows)


def test_the_keyword_query_uses_the_gin_index(postgres_uri: str, tmp_path: Path) -> None:
    storage = _storage(postgres_uri, tmp_path)
    try:
        arm = PostgresFtsKeywordArm(storage)
        with storage.transaction() as tx:
            arm.index(tx, _add(storage, *(Document(f"kiwi number {i}") for i in range(50))))
        plan = _explain(storage, "SELECT chunk_id FROM fts_english WHERE tsv @@ "
                        "to_tsquery('english', 'kiwi')", [])
        assert "fts_english_tsv" in plan
    finally:
        storage.close()


def test_normalization_changes_the_ranking(postgres_uri: str, tmp_path: Path) -> None:
    storage = _storage(postgres_uri, tmp_path)
    try:
        plain = PostgresFtsKeywordArm(storage)
        short, long = _add(storage, Document("kiwi kiwi"),
                           Document("kiwi kiwi kiwi " + "filler " * 300))
        with storage.transaction() as tx:
            plain.index(tx, [short, long])
        assert [h.chunk_id for h in plain.search("kiwi", Filters(), 2)] == [long.id, short.id]
        by_length = PostgresFtsKeywordArm(storage, PostgresFtsOptions(normalization=2))
        assert [h.chunk_id for h in by_length.search("kiwi", Filters(), 2)] == [short.id, long.id]
    finally:
        storage.close()


def _vector_corpus(storage: PostgresStorage, arm: PgvectorSemanticArm, n: int,
                   rare_every: int, dim: int = 16) -> tuple[np.ndarray, set[int]]:
    """``n`` chunks, one in ``rare_every`` of kind RARE and far from the query."""
    rng = np.random.default_rng(11)
    query = np.zeros(dim, dtype=np.float32)
    query[0] = 1.0
    docs = [Document(f"v{i}", kind="RARE" if i % rare_every == 0 else "ITEM") for i in range(n)]
    vectors = np.stack([(-query if d.kind == "RARE" else query) + 0.3 * rng.normal(size=dim)
                        for d in docs]).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    with storage.transaction() as tx:
        arm.bind(tx, "test/hnsw", dim)
    chunks = _add(storage, *docs)
    with storage.transaction() as tx:
        arm.add(tx, [c.id for c in chunks], vectors)
    return query, {c.id for c in chunks if c.kind == "RARE"}


@contextmanager
def _planner(storage: PostgresStorage, *settings: str) -> Iterator[Any]:
    """Run the block in a transaction with ``SET LOCAL`` planner/pgvector settings."""
    conn = storage.connection()
    with conn.transaction():
        for setting in settings:
            conn.execute(f"SET LOCAL {setting}")
        yield conn


def test_iterative_scan_returns_top_k_under_a_selective_filter(
    postgres_uri: str, tmp_path: Path
) -> None:
    storage = _storage(postgres_uri, tmp_path)
    try:
        arm = PgvectorSemanticArm(storage, PgvectorOptions(ef_search=40, exact_below=0))
        query, rare = _vector_corpus(storage, arm, 3000, rare_every=100)
        storage.connection().execute("ANALYZE")
        table = arm.bound.table  # type: ignore[union-attr]
        knn = f"SELECT chunk_id FROM {table} ORDER BY embedding <=> %s LIMIT 10"
        with _planner(storage) as conn:  # unfiltered: the planner picks the HNSW index itself
            assert "_hnsw" in "\n".join(r[0] for r in conn.execute("EXPLAIN " + knn, [query]))
        # Filtered, the planner may scan the few matching rows exactly (fine), or walk the
        # HNSW graph and drop what fails the filter: forced here, the case iterative scans fix.
        forced = ("enable_sort = off", "enable_seqscan = off", "enable_bitmapscan = off")
        with _planner(storage, *forced) as conn:
            plan = conn.execute(f"EXPLAIN SELECT v.chunk_id FROM {table} AS v JOIN chunks AS c "
                                "ON c.id = v.chunk_id WHERE c.kind = 'RARE' "
                                "ORDER BY v.embedding <=> %s LIMIT 10", [query]).fetchall()
            assert "_hnsw" in "\n".join(r[0] for r in plan)
            run = arm.search(query, Filters(kinds=("RARE",)), 10)
        assert len(run) == 10 and {h.chunk_id for h in run} <= rare
        exact = sorted(rare, key=lambda cid: -float(arm.vectors([cid])[0] @ query))[:10]
        assert len({h.chunk_id for h in run} & set(exact)) >= 8  # approximate, but close
        with _planner(storage, *forced, "hnsw.iterative_scan = off"):
            assert len(arm.search(query, Filters(kinds=("RARE",)), 10)) < 10  # without it
        exact_arm = PgvectorSemanticArm(storage)  # default: <= 5000 matches are ranked exactly
        with storage.transaction() as tx:
            exact_arm.bind(tx, "test/hnsw", 16)
        with _planner(storage, *forced):  # even when the planner is pushed towards the graph
            assert [h.chunk_id for h in exact_arm.search(query, Filters(kinds=("RARE",)), 10)] \
                == exact
    finally:
        storage.close()


def test_memory_semantics_on_postgres(pg_overrides: dict[str, Any], tmp_path: Path) -> None:
    loaded = load_settings(overrides=pg_overrides, read_user_config=False)
    memory = Memory(loaded, load_registry(), tmp_path / "project", tmp_path / "global")
    try:
        old = memory.remember("The database is PostgreSQL 15", kind="FACT",
                              event_time="2024-01-10")
        new = memory.remember("The database is PostgreSQL 17", kind="FACT",
                              event_time="2025-02-01", supersedes=old.document.id)
        assert new.superseded is not None and new.superseded.superseded_by == new.document.id
        now = memory.recall("database version")
        assert now.hits[0].chunk.document_id == new.document.id
        then = memory.recall("database version", as_of="2024-06-01")
        assert [h.chunk.document_id for h in then.hits] == [old.document.id]
        assert memory.find(new.document.id)[0][1].recalls == 1  # counted, in the recall's tx
        gone = memory.forget(new.document.id, reason="moved")
        assert gone.forgotten is not None
        storage = memory.scopes.require("local").arms.storage
        assert storage.get_forgotten(new.document.id).reason == "moved"
        status = memory.status()["scopes"]["local"]
        assert status["arms"]["storage"] == "postgres" and status["forgotten"] == 1
    finally:
        memory.close()


def test_a_server_error_rolls_the_write_back(postgres_uri: str, tmp_path: Path) -> None:
    storage = _storage(postgres_uri, tmp_path)
    try:
        with pytest.raises(psycopg.errors.UndefinedTable), storage.transaction() as tx:
            storage.add_document(tx, Document("kept?", id="k"), [Chunk("k", 0, "kept?")])
            tx.execute("SELECT * FROM no_such_table")
        assert storage.get_document("k") is None and storage.counts()["chunks"] == 0
    finally:
        storage.close()


def test_the_factory_builds_in_the_context_root(postgres_uri: str, tmp_path: Path) -> None:
    spec = load_registry().get("storage", "postgres")
    storage = spec.factory(spec.options_model(uri=postgres_uri), ArmContext(root=tmp_path))
    try:
        assert storage.schema == schema_name(tmp_path) and storage.size_bytes() > 0
    finally:
        storage.close()
