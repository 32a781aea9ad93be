"""Importing an export again after a recall in the store is all unchanged (trial 10: the
second import of one file "replaced 2" documents, a new revision and their chunks
embedded again, because recalls in between had changed their recall counts)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from cli_run import octomem

pytestmark = pytest.mark.slow


def _revisions(project: Path) -> list[tuple[str, int, int]]:
    with sqlite3.connect(project / ".octomem" / "octomem.sqlite3") as conn:
        return sorted(conn.execute("SELECT id, revision, recalls FROM documents"))


def test_a_recall_between_two_imports_leaves_the_second_unchanged(tmp_path: Path) -> None:
    source, target = tmp_path / "proj", tmp_path / "proj2"
    source.mkdir()
    target.mkdir()
    octomem(source, "remember", "The staging server is called heron")
    octomem(source, "remember", "Deploys go out on Tuesdays")
    octomem(source, "export", "--scope", "local", str(tmp_path / "exp.jsonl"))
    first = octomem(target, "import", str(tmp_path / "exp.jsonl"))
    assert "2 added, 0 replaced, 0 unchanged" in first.out
    hits = octomem(target, "recall", "what is the staging server called", "--json").json()
    assert "heron" in hits["hits"][0]["text"]
    before = _revisions(target)
    assert sum(recalls for _, _, recalls in before) >= 1  # the recall was counted
    again = octomem(target, "import", str(tmp_path / "exp.jsonl"))
    assert "0 added, 0 replaced, 2 unchanged" in again.out
    assert "0 chunks embedded" in again.out
    assert _revisions(target) == before  # no new revision; this store's counts kept
