"""The smaller failures of issue 13 (item 9) and `octomem --version`."""

from __future__ import annotations

import json
import re
from importlib.metadata import version
from pathlib import Path

import apsw
import pytest
from cli_run import octomem

pytestmark = pytest.mark.slow


def test_version(project: Path) -> None:
    assert octomem(project, "--version").out.strip() == f"octomem {version('octomem')}"


def _store(project: Path) -> Path:
    octomem(project, "add", "The zeta host runs Debian")
    return project / ".octomem" / "octomem.sqlite3"


@pytest.mark.parametrize("stored,expect", [
    (None, None), ("1", None), ("two", None), ("", None), ("7", "schema version 7"),
])
def test_a_store_whose_schema_version_is_missing_or_wrong_still_opens_or_says_why(
        project: Path, stored: str | None, expect: str | None) -> None:
    store = _store(project)
    conn = apsw.Connection(str(store))
    if stored is None:
        conn.execute("DELETE FROM meta WHERE key = 'schema_version'")
    else:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (stored,))
    conn.close()
    ran = octomem(project, "search", "zeta host", "--json", ok=expect is None)
    if expect is None:  # the tables say which version it is: the meta row is rewritten
        assert ran.json()["hits"]
        conn = apsw.Connection(str(store))
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'"
                            ).fetchall() == [("3",)]
    else:
        assert ran.code == 1 and expect in ran.err and str(store) in ran.err
        assert "duplicate column" not in ran.err


def test_status_says_semantic_unavailable_when_the_model_cannot_load(project: Path,
                                                                     tmp_path: Path) -> None:
    _store(project)
    ran = octomem(project, "--set", f"arms.fastembed.model_path={tmp_path / 'no-model'}",
                  "--set", "arms.fastembed.dim=384", "status", hashing=False)
    line = next(li for li in ran.out.splitlines() if li.strip().startswith("semantic"))
    assert "unavailable" in line and "no-model" in ran.out


def test_serve_refuses_a_project_root_that_does_not_exist(project: Path) -> None:
    typo = project.parent / "projcet"
    ran = octomem(project, "serve", "--project-root", str(typo), ok=False)
    assert ran.code != 0 and str(typo) in ran.err
    assert not typo.exists()


def test_import_into_another_scope_leaves_the_forget_log_behind(project: Path) -> None:
    kept = octomem(project, "add", "The eta service is in Go", "--json").json()
    gone = octomem(project, "add", "The eta service is in Rust", "--json").json()
    octomem(project, "forget", gone["id"], "--reason", "wrong")
    octomem(project, "export", "local.jsonl")
    ran = octomem(project, "import", "local.jsonl", "--scope", "global")
    assert "forget-log" in ran.out
    exported = [json.loads(li) for li in
                octomem(project, "export", "--scope", "global", "-").out.splitlines()]
    assert [r["id"] for r in exported if r["type"] == "document"] == [kept["id"]]
    assert [r for r in exported if r["type"] == "forgotten"] == []


def test_the_cli_kind_error_names_kind(project: Path) -> None:
    ran = octomem(project, "search", "x", "--kind", "to do", ok=False)
    assert ran.code == 2 and "--kind" in ran.err and "kinds:" not in ran.err


def test_docs_state_the_rrf_k_that_is_the_default() -> None:
    from octomem.engine.settings import RetrievalSettings

    k = RetrievalSettings().rrf_k
    mcp_doc = (Path(__file__).parents[1] / "docs" / "mcp.md").read_text()
    stated = {int(n) for n in re.findall(r"k\s*=\s*(\d+)", mcp_doc)}
    assert stated <= {k, 60} and (not stated or k in stated)
    assert not re.search(r"RRF[^.\n]*k\s*=\s*60(?![^.\n]*paper)", mcp_doc)
