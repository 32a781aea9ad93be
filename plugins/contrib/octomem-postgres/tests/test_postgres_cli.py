"""The CLI unchanged on the PostgreSQL arms: ingest, search, add, forget, status, config,
export/import and reindex, each selected by ``--set`` only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("octomem_postgres")

from typer.testing import CliRunner  # noqa: E402

from octomem.engine.cli import app  # noqa: E402


@pytest.fixture
def octomem(tmp_path: Path, postgres_uri: str) -> Any:
    """``octomem(*args)``: the CLI with the PostgreSQL arms, the hashing embedder and a
    temporary global root."""
    runner = CliRunner()
    base = ["--set", "pipeline.storage=postgres", "--set", "pipeline.keyword=postgres-fts",
            "--set", "pipeline.semantic=pgvector", "--set", "pipeline.embedder=hashing",
            "--set", f'arms.postgres.uri="{postgres_uri}"',
            "--global-root", str(tmp_path / "global")]

    def run(*args: str, ok: bool = True) -> Any:
        result = runner.invoke(app, [*base, *args], env={"COLUMNS": "200"})
        if ok:
            assert result.exit_code == 0, (result.output, result.exception)
        return result

    return run


def _json(result: Any) -> Any:
    return json.loads(result.stdout)  # stderr may say where a store was created


def test_ingest_search_status_config(octomem: Any, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "fusion.md").write_text("# Fusion\n\nReciprocal rank fusion combines the runs.\n")
    (docs / "deploy.md").write_text("# Deploy\n\nThe deploy script needs staging credentials.\n")
    octomem("ingest", str(docs))
    answer = _json(octomem("search", "how are the runs combined", "--json"))
    assert answer["hits"][0]["title"] == "Fusion"
    assert set(answer["arms_ran"]) == {"postgres-fts", "pgvector"}
    table = octomem("search", "staging credentials", "--explain").output
    assert "postgres-fts" in table and "pgvector" in table
    status = octomem("status").output
    assert "postgres" in status and "pgvector" in status
    config = octomem("config").output
    assert "arms.pgvector.ef_search" in config and "arms.postgres.uri" in config


def test_add_supersede_forget_export_import(octomem: Any, tmp_path: Path) -> None:
    old = _json(octomem("add", "Staging runs Postgres 14", "--event-time", "2024-01-01",
                        "--json"))
    new = _json(octomem("add", "Staging runs Postgres 16", "--event-time", "2025-01-01",
                        "--supersedes", old["id"], "--json"))
    then = _json(octomem("search", "staging postgres", "--as-of", "2024-06-30", "--json"))
    assert [h["id"] for h in then["hits"]] == [old["id"]]
    gone = _json(octomem("forget", new["id"], "--reason", "wrong", "--json"))
    assert gone["forgotten"]["id"] == new["id"]
    dump = tmp_path / "local.jsonl"
    octomem("export", str(dump))
    lines = [json.loads(line) for line in dump.read_text().splitlines()]
    assert [r["type"] for r in lines] == ["octomem-export", "document", "forgotten"]
    octomem("import", str(dump), "--scope", "global")
    glob = _json(octomem("search", "staging postgres", "--scope", "global",
                         "--include-superseded", "--json"))
    assert [h["id"] for h in glob["hits"]] == [old["id"]]


def test_reindex_fills_the_vectors_on_postgres(octomem: Any, tmp_path: Path) -> None:
    notes = tmp_path / "notes.md"
    notes.write_text("Kiwis are flightless birds from New Zealand.\n")
    octomem("--set", "pipeline.semantic=", "ingest", str(notes), "--scope", "global")
    out = octomem("reindex").output
    assert "embedded 1 chunk;" in out and "0 without a vector" in out


def test_log_tail_says_the_storage_keeps_no_call_log(octomem: Any) -> None:
    """Trial 12 F13: the hint was to turn on OCTOMEM_CALL_LOG, which changes nothing here."""
    octomem("add", "The call log lives in SQLite files only")
    out = octomem("log", "tail").output
    assert "the postgres storage keeps no call log" in out, out
    assert "OCTOMEM_CALL_LOG" not in out


def test_reads_of_scopes_not_created_make_no_folder_and_no_schema(
        octomem: Any, tmp_path: Path, postgres_uri: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 13 F12: a read creates no store; on PostgreSQL, no schema (and no folder)."""
    import psycopg

    from octomem_postgres.schema import schema_name

    project = tmp_path / "proj"
    (project / ".octomem").mkdir(parents=True)  # a folder without a schema: not a scope
    monkeypatch.chdir(project)

    def schemas() -> set[str]:
        with psycopg.connect(postgres_uri, autocommit=True) as conn:
            return {r[0] for r in conn.execute("SELECT nspname FROM pg_namespace")}

    before = schemas()
    assert "nothing is stored" in octomem("search", "anything").output
    assert not json.loads(octomem("status", "--json").stdout)["scopes"]["global"]["exists"]
    octomem("session-start")
    assert schemas() == before and not (tmp_path / "global").exists()
    octomem("add", "Deploys happen on Tuesdays", "--scope", "global")
    assert schemas() - before == {schema_name(tmp_path / "global")}
    assert "Tuesdays" in octomem("search", "when are deploys").output
    assert schemas() - before == {schema_name(tmp_path / "global")}


def test_a_moved_project_keeps_its_memory(octomem: Any, tmp_path: Path, postgres_uri: str,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 17 G12: a renamed project read as empty ("nothing is stored") and its next
    write started a second schema; the folder now names its schema."""
    import psycopg

    from octomem_postgres.schema import MARKER, schema_name

    project = tmp_path / "proj"
    project.mkdir()
    monkeypatch.chdir(project)
    octomem("add", "The billing service runs gunicorn with 8 workers")
    schema = schema_name(project / ".octomem")
    assert (project / ".octomem" / MARKER).read_text() == schema + "\n"
    moved = tmp_path / "billing"
    project.rename(moved)
    monkeypatch.chdir(moved)
    found = _json(octomem("search", "how many gunicorn workers?", "--json"))
    assert [h["text"] for h in found["hits"]] == [
        "The billing service runs gunicorn with 8 workers"]
    octomem("add", "The billing service deploys on Fridays")
    with psycopg.connect(postgres_uri, autocommit=True) as conn:
        assert conn.execute(f'SELECT count(*) FROM "{schema}".documents').fetchone()[0] == 2
        root = conn.execute(f"SELECT value FROM \"{schema}\".meta WHERE key = 'scope_root'")
        assert root.fetchone()[0] == str((moved / ".octomem").resolve())
        others = conn.execute("SELECT count(*) FROM pg_namespace WHERE nspname = %s",
                              (schema_name(moved / ".octomem"),)).fetchone()[0]
    assert others == 0  # no second schema for the new path


def test_tags_an_older_octomem_stored_are_relabelled_when_the_schema_opens(
        octomem: Any, tmp_path: Path, postgres_uri: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Trial 20 L12 on PostgreSQL: tags stored decomposed (``cafe`` + U+0301) or holding a
    comma by an older octomem are rewritten as labels once, so the filters find them."""
    import psycopg
    from psycopg.types.json import Jsonb

    from octomem_postgres.schema import schema_name
    from octomem_postgres.tag_labels import LABELLED_KEY

    project = tmp_path / "proj"
    project.mkdir()
    monkeypatch.chdir(project)
    espresso = _json(octomem("add", "The espresso machine is descaled every Friday",
                             "--tag", "kitchen", "--json"))["id"]
    refunds = _json(octomem("add", "Refund API calls are deduplicated by request id",
                            "--tag", "payments", "--json"))["id"]
    schema = schema_name(project / ".octomem")
    with psycopg.connect(postgres_uri, autocommit=True) as conn:  # as an older octomem did
        assert conn.execute(f'SELECT value FROM "{schema}".meta WHERE key = %s',
                            (LABELLED_KEY,)).fetchone() == ("1",)  # a new schema is marked
        older = ((espresso, ["cafe\u0301"]), (refunds, ["billing,api", " payments "]))
        for table, key in (("documents", "id"), ("chunks", "document_id")):
            for doc_id, tags in older:
                conn.execute(f'UPDATE "{schema}".{table} SET tags = %s WHERE {key} = %s',
                             (Jsonb(tags), doc_id))
        conn.execute(f'DELETE FROM "{schema}".meta WHERE key = %s', (LABELLED_KEY,))

    def hits(query: str, *tags: str) -> list[str]:
        args = [a for tag in tags for a in ("--tag", tag)]
        return [h["id"] for h in _json(octomem("search", query, *args, "--json"))["hits"]]

    assert hits("espresso descaled", "caf\u00e9") == [espresso]
    assert hits("refund duplicates", "billing", "api", "payments") == [refunds]
    with psycopg.connect(postgres_uri, autocommit=True) as conn:
        stored = dict(conn.execute(f'SELECT id, tags FROM "{schema}".documents').fetchall())
        chunk = conn.execute(f'SELECT tags FROM "{schema}".chunks WHERE document_id = %s',
                             (refunds,)).fetchone()[0]
        marked = conn.execute(f'SELECT value FROM "{schema}".meta WHERE key = %s',
                              (LABELLED_KEY,)).fetchone()
    assert stored == {espresso: ["caf\u00e9"], refunds: ["billing", "api", "payments"]}
    assert chunk == ["billing", "api", "payments"] and marked == ("1",)
