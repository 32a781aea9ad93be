"""Export formats: JSONL times as exact ISO-8601 (the old epoch form still imports);
Markdown with a heading per kind, one paragraph per statement, documents' own paragraphs;
the memory resource ordered as it says."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from octomem.engine.errors import OctomemError
from octomem.engine.memory.facade import Memory, open_memory
from octomem.engine.memory.transfer import export_scope, import_lines
from octomem.engine.memory.view import scope_markdown

HASHING = {"pipeline": {"embedder": "hashing"}}
ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


@pytest.fixture
def open_project(tmp_path: Path) -> Iterator[Callable[[str], Memory]]:
    opened: list[Memory] = []

    def open_(name: str) -> Memory:
        memory = open_memory(overrides=HASHING, project_root=tmp_path / name,
                             global_root=tmp_path / f"{name}-global")
        opened.append(memory)
        return memory

    yield open_
    for memory in opened:
        memory.close()


def _export(memory: Memory, fmt: str = "jsonl") -> str:
    out = io.StringIO()
    export_scope(memory, "local", fmt, out)
    return out.getvalue()


def _fill(memory: Memory) -> None:
    memory.remember("Staging runs Postgres 16", kind="FACT", event_time="2024-03-01")
    memory.remember("The user prefers tabs", kind="PREFERENCE", event_time="2025-01-10")
    memory.remember("Deploys go out on Thursdays", kind="FACT", event_time="2025-06-01")
    memory.remember("CI takes twelve minutes", kind="FACT", event_time="2023-01-01")
    old = memory.remember("The API is served by Flask", kind="FACT", event_time="2022-05-01")
    memory.remember("The API is served by FastAPI", kind="FACT", event_time="2024-08-01",
                    supersedes=old.document.id)
    memory.ingest("# Runbook\n\nFirst restart the worker.\n\n# Then\n\nCheck the queue depth.",
                  title="Runbook", uri="notes/runbook.md")
    memory.forget(memory.remember("a secret to forget").document.id, reason="test")


def test_jsonl_times_are_iso_and_read_back_exactly(open_project: Callable[[str], Memory]) -> None:
    one = open_project("one")
    _fill(one)
    text = _export(one)
    records = [json.loads(line) for line in text.splitlines()]
    assert records[0]["format"] == 2
    docs = [r for r in records if r["type"] == "document"]
    for doc in docs:
        assert ISO.match(doc["created_at"]), doc["created_at"]
        assert doc["event_time"] is None or ISO.match(doc["event_time"])
    assert any(d["event_time"] == "2024-03-01T00:00:00Z" for d in docs)
    superseded = next(d for d in docs if d["valid_to"] is not None)
    assert ISO.match(superseded["valid_to"])
    gone = next(r for r in records if r["type"] == "forgotten")
    assert ISO.match(gone["created_at"]) and ISO.match(gone["forgotten_at"])
    # back into the same scope: every document is unchanged (its times are the same floats)
    again = import_lines(one, text.splitlines(), "x.jsonl")
    assert len(again.unchanged) == len(docs) and not again.replaced
    two = open_project("two")
    import_lines(two, text.splitlines(), "x.jsonl")
    assert _export(two).splitlines()[1:] == text.splitlines()[1:]  # lossless, header aside


def test_format_1_epoch_seconds_still_import(open_project: Callable[[str], Memory]) -> None:
    one = open_project("one")
    _fill(one)
    records = [json.loads(line) for line in _export(one).splitlines()]
    records[0]["format"] = 1
    for record in records[1:]:  # what format 1 wrote: epoch seconds
        for name in ("created_at", "event_time", "valid_to", "last_recalled_at", "forgotten_at"):
            if isinstance(record.get(name), str):
                record[name] = _epoch(record[name])
        for chunk in record.get("chunks") or ():
            for name in ("valid_from", "valid_to"):
                if chunk.get(name) is not None:
                    chunk[name] = _epoch(chunk[name])
    old_form = [json.dumps(r) for r in records]
    assert isinstance(json.loads(old_form[1])["created_at"], float)
    report = import_lines(one, old_form, "old.jsonl")
    assert len(report.unchanged) == len(records) - 2 and not report.replaced  # same times


def _epoch(text: str) -> float:
    from octomem.engine.memory.exact_times import exact_epoch

    return exact_epoch(text, "t")


def test_a_bad_time_names_the_line_and_field(open_project: Callable[[str], Memory]) -> None:
    lines = ['{"type": "octomem-export", "format": 2}',
             '{"type": "document", "id": "a", "text": "x", "created_at": "yesterday"}']
    with pytest.raises(OctomemError, match=r"x\.jsonl:2: created_at: 'yesterday' is not an "
                                           r"ISO-8601 time.*nothing was imported"):
        import_lines(open_project("one"), lines, "x.jsonl")


def test_markdown_has_a_heading_per_kind_and_a_paragraph_per_statement(
        open_project: Callable[[str], Memory]) -> None:
    memory = open_project("one")
    _fill(memory)
    md = _export(memory, "md")
    headings = re.findall(r"^## (.+)$", md, re.M)
    assert headings == ["DOC (1)", "FACT (4)", "PREFERENCE (1)", "Superseded"]
    assert "` · 6 current entries by kind, newest first" in md  # a DOC is not a statement
    facts = md.split("## FACT (4)")[1].split("## PREFERENCE")[0]
    paragraphs = [p for p in facts.split("\n\n") if p.strip()]
    assert [p.split(" — ")[0] for p in paragraphs] == [  # newest first, by event time
        "Deploys go out on Thursdays", "The API is served by FastAPI",
        "Staging runs Postgres 16", "CI takes twelve minutes"]
    assert all(re.search(r" — \*\d{4}-\d\d-\d\d · `[^`]+`", p) for p in paragraphs)
    runbook = md.split("### Runbook")[1]
    assert "*" in runbook.splitlines()[2] and "source: notes/runbook.md" in runbook
    assert "\n\nFirst restart the worker.\n\n\\# Then\n\nCheck the queue depth.\n" in runbook
    assert "The API is served by Flask — *2022-05-01" in md.split("## Superseded")[1]


def test_the_memory_resource_is_ordered_as_it_says(open_project: Callable[[str], Memory]) -> None:
    memory = open_project("one")
    # recorded in this order, happened in another: the resource follows when it happened
    memory.remember("Second event", kind="FACT", event_time="2025-02-01")
    memory.remember("Third event", kind="FACT", event_time="2025-03-01")
    memory.remember("First event", kind="FACT", event_time="2025-01-01")
    text = scope_markdown(memory, "local")
    assert "newest first (by when each happened" in text
    assert text.index("Third event") < text.index("Second event") < text.index("First event")


def test_markdown_counts_one_statement_in_the_singular(
        open_project: Callable[[str], Memory]) -> None:
    memory = open_project("one")
    memory.remember("Staging runs Postgres 16", kind="FACT")
    assert "` · 1 current statement by kind, newest first" in _export(memory, "md")
