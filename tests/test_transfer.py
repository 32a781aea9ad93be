"""Export and import: the JSONL round trip is lossless; Markdown is for people."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from octomem.engine.cli import app
from octomem.engine.errors import OctomemError
from octomem.engine.memory.facade import Memory, open_memory
from octomem.engine.memory.transfer import export_scope, import_lines

HASHING = {"pipeline": {"embedder": "hashing"}}


@pytest.fixture
def open_project(tmp_path: Path) -> Iterator[Callable[[str], Memory]]:
    opened: list[Memory] = []

    def open_(name: str) -> Memory:
        (tmp_path / name).mkdir(exist_ok=True)
        memory = open_memory(overrides=HASHING, project_root=tmp_path / name,
                             global_root=tmp_path / f"{name}-global")
        opened.append(memory)
        return memory

    yield open_
    for memory in opened:
        memory.close()


def _fill(memory: Memory) -> dict[str, str]:
    old = memory.remember("The API is served by Flask", kind="FACT", tags=("api", "web"),
                          event_time="2023-02-01")
    new = memory.remember("The API is served by FastAPI", kind="FACT", tags=("api",),
                          event_time="2024-08-01", supersedes=old.document.id)
    memory.remember("Handoff: migrating the auth module", kind="HANDOFF")
    handoff = memory.remember("Handoff: auth done; start on billing", kind="HANDOFF")
    secret = memory.remember("The admin password is hunter2")
    memory.forget(secret.document.id, reason="no secrets in memory")
    long = "\n\n".join(f"Section {i}: how the cache warms up and expires. " * 15 for i in range(5))
    memory.ingest(long, title="Cache guide", uri="https://example.org/cache")
    memory.ingest(long + "\n\nAppendix: eviction.", title="Cache guide",
                  uri="https://example.org/cache")
    memory.recall("which framework serves the API")
    memory.recall("which framework serves the API")
    return {"old": old.document.id, "new": new.document.id, "handoff": handoff.document.id,
            "secret": secret.document.id}


def _export(memory: Memory, fmt: str = "jsonl", scope: str = "local") -> str:
    out = io.StringIO()
    export_scope(memory, scope, fmt, out)
    return out.getvalue()


def test_jsonl_round_trip_is_lossless(open_project: Callable[[str], Memory]) -> None:
    source, target = open_project("source"), open_project("target")
    ids = _fill(source)
    text = _export(source)
    report = import_lines(target, text.splitlines(), "export.jsonl")
    assert report.scope == "local" and len(report.added) == 5 and report.forgotten_logged == 1
    assert report.embedded > 0 and report.semantic_error is None
    assert _export(target).splitlines()[1:] == text.splitlines()[1:]  # all but the header
    rows = {r["id"]: r for r in map(json.loads, text.splitlines()[1:]) if r["type"] == "document"}
    assert rows[ids["old"]]["superseded_by"] == ids["new"] and rows[ids["old"]]["valid_to"]
    assert rows[ids["new"]]["supersedes"] == ids["old"] and rows[ids["new"]]["recalls"] == 2
    assert rows[ids["old"]]["tags"] == ["api", "web"]
    guide = next(r for r in rows.values() if r["kind"] == "DOC")
    assert guide["revision"] == 2 and {c["revision"] for c in guide["chunks"]} == {1, 2}
    assert "hunter2" not in text
    # the imported memory behaves like the original
    answer = target.recall("which framework serves the API", as_of="2023-06-01")
    assert [h.chunk.document_id for h in answer.hits][:1] == [ids["old"]]
    assert target.recall("handoff", kinds=["HANDOFF"]).hits[0].chunk.document_id == ids["handoff"]


def test_import_is_idempotent_and_never_resurrects(open_project: Callable[[str], Memory]) -> None:
    memory = open_project("one")
    ids = _fill(memory)
    text = _export(memory)
    again = import_lines(memory, text.splitlines(), "x.jsonl")
    assert again.added == [] and again.replaced == [] and len(again.unchanged) == 5
    memory.forget(ids["new"], reason="wrong")
    back = import_lines(memory, text.splitlines(), "x.jsonl")
    assert back.skipped_forgotten == [ids["new"]] and back.added == []
    assert ids["new"] not in {h.chunk.document_id for h in memory.recall(
        "framework serves the API", include_superseded=True).hits}


def test_import_into_another_scope(open_project: Callable[[str], Memory]) -> None:
    memory = open_project("one")
    memory.remember("The user likes concise answers", scope="global")
    report = import_lines(memory, _export(memory, scope="global").splitlines(), "g.jsonl",
                          scope="local")
    assert report.scope == "local" and len(report.added) == 1


def test_markdown_is_for_people_only(open_project: Callable[[str], Memory]) -> None:
    memory = open_project("one")
    ids = _fill(memory)
    md = _export(memory, "md")
    assert md.startswith("# octomem · local memory")
    assert md.index("FastAPI") < md.index("## Superseded") < md.index("Flask")
    assert f"superseded by `{ids['new']}`" in md and "hunter2" not in md
    with pytest.raises(OctomemError, match="not an octomem JSONL export"):
        import_lines(memory, md.splitlines(), "memory.md")


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"type": "octomem-export", "format": 1}', "{oops"], r"x\.jsonl:2: not valid JSON"),
        (['{"type": "octomem-export", "format": 1}', '{"type": "vector"}'], "unknown record"),
        (['{"type": "octomem-export", "format": 1}', '{"type": "document"}'], "malformed"),
        (['{"type": "octomem-export", "format": 9}'], "format 1"),
    ],
)
def test_malformed_exports_name_the_line(open_project: Callable[[str], Memory], lines: list[str],
                                         message: str) -> None:
    with pytest.raises(OctomemError, match=message):
        import_lines(open_project("one"), lines, "x.jsonl")


def test_cli_export_import(tmp_path: Path) -> None:
    base = ["--set", "pipeline.embedder=hashing", "--global-root", str(tmp_path / "g")]
    runner = CliRunner()
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    added = runner.invoke(app, [*base, "--project-root", str(one), "add", "Ports: web 8080",
                                "--kind", "FACT", "--tag", "ports"])
    assert added.exit_code == 0, added.output
    out = tmp_path / "local.jsonl"
    exported = runner.invoke(app, [*base, "--project-root", str(one), "export", str(out)])
    assert exported.exit_code == 0, exported.output
    imported = runner.invoke(app, [*base, "--project-root", str(two), "import", str(out)])
    assert imported.exit_code == 0 and "1 added" in imported.output
    found = runner.invoke(app, [*base, "--project-root", str(two), "search", "web port",
                                "--scope", "local", "--json"])
    hit = json.loads(found.stdout)["hits"][0]
    assert (hit["text"], hit["kind"], hit["tags"], hit["scope"]) == (
        "Ports: web 8080", "FACT", ["ports"], "local")
    md = runner.invoke(app, [*base, "--project-root", str(two), "export", "-", "--format", "md"])
    assert "Ports: web 8080" in md.output
