"""Trial 15's smaller findings (F14, F16), and these fixes:

- a query copied from coloured terminal output searched its escape codes as words
  (``\\x1b[31mERROR`` as ``31merror``);
- ``COLUMNS=3`` printed the help one letter a line and a query three letters a line
  (now laid out at 30 columns);
- ``--set retrieval.relevance_floor=nan`` said "should be less than or equal to 1";
- a ``.octomem`` linked to a folder that does not exist failed with "storage arm 'sqlite'
  could not be built: FileNotFoundError ... octomem.sqlite3";
- an import refused for its supersede links left an empty store behind in a fresh scope.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from cli_run import octomem
from pydantic import ValidationError

from octomem.engine.controls import searchable
from octomem.engine.memory.facade import Memory
from octomem.engine.settings_schema import Settings


def test_escape_sequences_and_controls_are_not_searched() -> None:
    assert searchable("\x1b[31mERROR 42\x1b[0m on host") == " ERROR 42  on host"
    assert searchable("title\x1b]0;new title\x07 here") == "title  here"
    assert searchable("a\x00b\x7fc\tnew\nline") == "a b c\tnew\nline"
    assert searchable("plain café query") == "plain café query"


def test_a_coloured_query_ranks_as_its_words(memory: Memory) -> None:
    memory.remember("The deploy failed with ERROR 42 on host kestrel.")
    memory.remember("Uploads resume after a dropped connection.")
    plain = memory.recall("ERROR 42 deploy", count=False)
    coloured = memory.recall("\x1b[31mERROR 42\x1b[0m deploy", count=False)
    assert [h.chunk.text for h in coloured.hits] == [h.chunk.text for h in plain.hits]
    assert coloured.hits[0].chunk.text.startswith("The deploy failed")
    assert [h.relevance for h in coloured.hits] == [h.relevance for h in plain.hits]


def test_narrow_columns_lay_out_at_thirty(project: Path) -> None:
    ran = octomem(project, "--help", COLUMNS="3", spawn=True, hashing=False)
    assert ran.out.splitlines()[0].strip() == "Usage: octomem [OPTIONS]"
    octomem(project, "add", "The 9:09 train arrives at 12:05.")
    narrow = octomem(project, "search", "train arrives", COLUMNS="3").out.splitlines()
    thirty = octomem(project, "search", "train arrives", COLUMNS="30").out.splitlines()
    assert narrow[:3] == thirty[:3] == [
        "'train arrives'", "1  0.52  local  The 9:09 train arrives", "                at 12:05."]


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_setting_that_is_not_finite_says_so(project: Path, value: str) -> None:
    ran = octomem(project, "--set", f"retrieval.relevance_floor={value}", "search", "x",
                  ok=False)
    assert (ran.code, ran.err.strip()) == (2, (
        "error: setting 'retrieval.relevance_floor' from --set: Input should be a finite "
        "number; see `octomem --help`"))
    with pytest.raises(ValidationError, match="finite number"):
        Settings(retrieval={"weights": {"fts5": math.nan}})


def test_a_link_to_nothing_is_named(project: Path, tmp_path: Path) -> None:
    (project / ".git").mkdir()
    (project / ".octomem").symlink_to(tmp_path / "unmounted" / "memory")
    ran = octomem(project, "remember", "The 9:09 train arrives at 12:05.", ok=False)
    assert (ran.code, ran.err.strip()) == (1, (
        f"error: {project / '.octomem'}: a link to {tmp_path / 'unmounted' / 'memory'}, "
        "which does not exist: create that folder, or remove the link"))
    assert not (tmp_path / "unmounted").exists()


def test_a_refused_import_leaves_no_store(project: Path, tmp_path: Path) -> None:
    header = {"type": "octomem-export", "format": 2, "scope": "global",
              "exported_at": "2026-12-03T11:30:28+00:00"}
    record = {"type": "document", "kind": "ITEM", "created_at": "2026-12-03T11:30:00Z",
              "tags": [], "metadata": {}, "recalls": 0, "revision": 1}
    first = {**record, "id": "a" * 32, "text": "first", "supersedes": "b" * 32,
             "superseded_by": "b" * 32, "valid_to": "2026-12-03T11:31:00Z"}
    second = {**record, "id": "b" * 32, "text": "second", "supersedes": "a" * 32,
              "superseded_by": "a" * 32, "valid_to": "2026-12-03T11:32:00Z"}
    export = project / "cycle.jsonl"
    export.write_text("".join(json.dumps(o) + "\n" for o in (header, first, second)))
    fresh = tmp_path / "fresh"
    ran = octomem(project, "--data-dir", str(fresh), "--global-root", str(fresh), "import",
                  str(export), "--scope", "global", ok=False)
    assert ran.code == 1 and "a supersede cycle" in ran.err and "nothing was imported" in ran.err
    assert not fresh.exists()
