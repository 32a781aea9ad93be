"""A folder remembers its files (issue 13, item 4): re-ingesting it after a file was
deleted reports the file and, by ``ingest.on_missing`` (``forget`` by default, or
``keep``), forgets it with a reason."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_run import octomem
from mcp_stdio import stdio_client

pytestmark = pytest.mark.slow


def _folder(project: Path) -> Path:
    notes = project / "notes"
    (notes / "sub").mkdir(parents=True)
    (notes / "kiwi.md").write_text("# Kiwi\n\nThe kiwi fruit ripens in a paper bag.\n")
    (notes / "sub" / "plum.md").write_text("# Plum\n\nThe plum tree needs pruning in June.\n")
    (notes / "fig.md").write_text("# Fig\n\nThe fig grows against the south wall.\n")
    return notes


def test_cli_reingest_forgets_deleted_files_with_a_reason(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    notes = _folder(project)
    octomem(project, "ingest", "notes")
    (notes / "sub" / "plum.md").unlink()
    again = octomem(project, "ingest", "notes")
    assert "plum.md" in again.out + again.err and "forgot" in (again.out + again.err)
    hits = octomem(project, "search", "plum tree pruning", "--json").json()["hits"]
    assert all("plum" not in h["text"] for h in hits)
    assert octomem(project, "search", "kiwi paper bag", "--json").json()["hits"]
    md = octomem(project, "export", "-").out
    assert "file gone" in md and "plum.md" in md  # the forget log keeps the reason


def test_mcp_reingest_reports_and_keep_leaves_them(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    notes = _folder(project)
    with stdio_client(tmp_path, project, OCTOMEM_INGEST__ON_MISSING="keep") as mcp:
        first = mcp.ok("ingest", path_or_text="notes")
        assert len(first["added"]) == 3
        (notes / "fig.md").unlink()
        again = mcp.ok("ingest", path_or_text="notes")
        assert [Path(m["path"]).name for m in again["missing"]] == ["fig.md"]
        assert again["forgotten"] == []
        assert mcp.ok("recall", query="fig south wall")["hits"]
    with stdio_client(tmp_path, project) as mcp:
        again = mcp.ok("ingest", path_or_text="notes")
        assert [Path(m["path"]).name for m in again["forgotten"]] == ["fig.md"]
        hits = mcp.ok("recall", query="fig south wall")["hits"]
        assert all("fig" not in h["text"].lower() for h in hits)
        # a single file ingested on its own is no folder's: nothing else is touched
        assert mcp.ok("ingest", path_or_text="notes/kiwi.md")["missing"] == []
