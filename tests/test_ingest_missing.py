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


def _ids(project: Path, query: str) -> list[str]:
    """The ids of the hits for ``query`` whose text holds its first word."""
    word = query.split()[0].lower()
    return [h["id"] for h in octomem(project, "search", query, "--json").json()["hits"]
            if word in h["text"].lower()]


def test_a_file_that_comes_back_is_stored_again_but_a_deliberate_forget_holds(
        tmp_path: Path) -> None:
    """Trial 8: a file moved away and back (branch switch, git stash) was 'forgotten, not
    re-added' forever; a failed ingest of its folder forgot it too."""
    project = tmp_path / "project"
    notes = project / "notes"
    notes.mkdir(parents=True)
    deploy = notes / "deploy.md"
    deploy.write_text("Deploy key rotation happens every 90 days\n")
    octomem(project, "ingest", "notes")
    [doc_id] = _ids(project, "deploy key rotation")
    aside = tmp_path / "deploy.md"
    deploy.rename(aside)
    failed = octomem(project, "ingest", "notes/", ok=False)  # the folder is empty now
    assert failed.code == 1 and "no text file" in failed.err
    assert "kept its document (this ingest failed)" in failed.out
    assert _ids(project, "deploy key rotation") == [doc_id]  # a failed ingest forgot nothing
    (notes / "other.md").write_text("Unrelated note about lunch\n")
    gone = octomem(project, "ingest", "notes")
    assert "forgot its document" in gone.out and _ids(project, "deploy key rotation") == []
    aside.rename(deploy)  # it comes back
    back = octomem(project, "ingest", "notes")
    assert "added 1" in back.out and "not re-added" not in back.out
    assert _ids(project, "deploy key rotation") == [doc_id]
    deploy.write_text("Deploy key rotation happens every 30 days\n")
    assert "replaced 1" in octomem(project, "ingest", "notes/deploy.md").out
    # a deliberate forget is a tombstone: not re-added, even with new content
    octomem(project, "forget", doc_id, "--reason", "not wanted")
    deploy.write_text("Deploy key rotation happens every week\n")
    again = octomem(project, "ingest", "notes")
    assert "1 forgotten, not re-added" in again.out and _ids(project, "deploy key") == []


def test_import_takes_back_a_file_forgotten_as_gone(tmp_path: Path) -> None:
    project = tmp_path / "project"
    notes = project / "notes"
    notes.mkdir(parents=True)
    (notes / "kiwi.md").write_text("The kiwi fruit ripens in a paper bag.\n")
    (notes / "fig.md").write_text("The fig grows against the south wall.\n")
    octomem(project, "ingest", "notes")
    octomem(project, "export", "--scope", "local", str(tmp_path / "before.jsonl"))
    (notes / "fig.md").unlink()
    assert "forgot its document" in octomem(project, "ingest", "notes").out
    assert _ids(project, "fig south wall") == []
    imported = octomem(project, "import", str(tmp_path / "before.jsonl"), "--scope", "local")
    assert "not re-added" not in imported.out + imported.err
    assert len(_ids(project, "fig south wall")) == 1
