"""Trial 16 F23, the ingest items: progress lines in logs, a BEIR corpus with a duplicate
``_id``, Markdown front matter, and ``--tag``."""

from __future__ import annotations

import io
import json
from pathlib import Path

from cli_run import octomem
from rich.console import Console

from octomem.engine.cli.progress import LineProgress
from octomem.engine.memory.facade import Memory


def test_piped_progress_says_nothing_of_a_step_that_starts_and_ends_quickly() -> None:
    out = io.StringIO()
    bar = LineProgress(Console(file=out, width=80), ends=False)  # every_s: 10 s
    task = bar.add_task("indexing 3 files", total=3)
    bar.advance(task, 3)
    bar.update(task, completed=3)
    assert out.getvalue() == ""
    slow = LineProgress(Console(file=out, width=80), every_s=0.0, ends=False)
    task = slow.add_task("embedding chunks", total=4)  # a long step: a line as it runs
    slow.advance(task, 2)
    assert out.getvalue().startswith("embedding chunks: 2/4 (50%), 00:00:00")
    logged = LineProgress(Console(file=io.StringIO(), width=80))  # bench: start and end
    logged.add_task("querying fts5", total=1)
    assert logged.console.file.getvalue().startswith("querying fts5: 0/1 (0%)")


def test_a_beir_corpus_with_a_duplicate_id_names_the_lines(project: Path) -> None:
    """A second row with the same ``_id`` was stored as a replacement of the first (which
    became history), reported as ``added 1, replaced 2`` for 3 rows of 2 ids, without a
    word. The corpus is read whole first: a note names each repeated id and its lines
    (even after the first batch, 1,024 rows); the corpus is stored (LongMemEval's repeats
    8 session turns at a second date). A row without ``_id`` stores nothing and no store."""
    corpus = project / "fakebeir"
    corpus.mkdir()
    rows = [{"_id": str(i), "text": f"abstract {i} about kestrel nesting"} for i in range(1100)]
    rows += [{"_id": "7", "text": "dup id second text"}, {"_id": 7, "text": "numeric id"}]
    (corpus / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[:1100])
                                         + json.dumps({"text": "no id"}) + "\n")
    where = corpus / "corpus.jsonl"
    ran = octomem(project, "ingest", "--beir", str(corpus), ok=False)
    assert ran.code == 1
    assert ran.err.strip() == (f"error: {where}:1101: the row has no '_id' field; nothing of "
                               "the corpus was stored")
    assert not (project / ".octomem").exists()
    (corpus / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    ran = octomem(project, "ingest", "--beir", str(corpus))
    assert [line for line in ran.err.splitlines() if line.startswith("note:")] == [
        f"note: {where}:1101: _id '7' again (first on line 8): stored as its new revision, "
        "the earlier row kept as history",
        f"note: {where}:1102: _id '7' again (first on line 8): stored as its new revision, "
        "the earlier row kept as history"]
    assert "added 1,100, replaced 2" in ran.out


PM = """---
title: Incident 42 postmortem
tags: [incident, db]
date: 2026-10-02
---
The primary database ran out of disk at 02:10; the write-ahead log moved to a bigger volume.
"""


def _hits(project: Path, query: str, *args: str) -> list[dict]:
    return octomem(project, "search", query, "--json", *args).json()["hits"]


def test_front_matter_gives_title_tags_and_date_and_is_not_text(project: Path) -> None:
    notes = project / "notes"
    notes.mkdir()
    (notes / "pm.md").write_text(PM)
    (notes / "plain.txt").write_text("---\ntitle: not front matter in a text file\n---\nok\n")
    octomem(project, "ingest", str(notes), "--tag", "team-a", "--tag", "db")
    hit, = _hits(project, "why did the database run out of disk?", "--tag", "incident")
    assert (hit["title"], hit["tags"], hit["event_time"]) == (
        "Incident 42 postmortem", ["incident", "db", "team-a"], "2026-10-02T00:00:00+00:00")
    assert hit["text"] == ("The primary database ran out of disk at 02:10; the write-ahead log "
                           "moved to a bigger volume.")
    plain, = _hits(project, "not front matter", "--tag", "team-a")  # .txt: read whole
    assert plain["text"].startswith("---\ntitle: not front matter")
    # only the front matter's tags changed: a new revision, found by its new tag
    (notes / "pm.md").write_text(PM.replace("[incident, db]", "incident, storage"))
    again = octomem(project, "ingest", str(notes / "pm.md")).out
    assert "added 0, replaced 1, unchanged 0 documents" in again
    hit, = _hits(project, "why did the database run out of disk?", "--tag", "storage")
    assert hit["tags"] == ["incident", "storage"]


def test_a_bad_front_matter_tag_refuses_the_file_and_bad_yaml_is_text(project: Path) -> None:
    bad = project / "bad.md"
    bad.write_text("---\ntags: [on call]\n---\nThe pager rota changes on Mondays.\n")
    ran = octomem(project, "ingest", str(bad), ok=False)
    assert ran.code == 1
    assert ran.err.strip() == (
        f"error: {bad}: front matter tags: tag 'on call' holds a space; a tag is one label "
        "without spaces or control characters, e.g. billing-api; nothing was stored")
    assert not (project / ".octomem").exists()
    rule = project / "rule.md"  # a thematic break, then text: no YAML mapping
    rule.write_text("---\nJust a note under a rule: deploys freeze on Fridays.\n---\nmore\n")
    octomem(project, "ingest", str(rule))
    hit, = _hits(project, "when do deploys freeze?")
    assert hit["text"].startswith("---\nJust a note under a rule")


def test_ingest_tags_reach_every_document_and_turn_and_a_bad_one_is_a_usage_error(
        project: Path, memory: Memory) -> None:
    chat = project / "chat.jsonl"
    chat.write_text('{"speaker": "Ana", "text": "Staging moved to port 8443."}\n')
    octomem(project, "ingest", str(chat), "--tag", "ops")
    hit, = _hits(project, "which port does staging use?", "--tag", "ops")
    assert hit["text"] == "Ana: Staging moved to port 8443." or "8443" in hit["text"]
    ran = octomem(project, "ingest", str(chat), "--tag", "two words", ok=False)
    assert ran.code == 2 and ran.err.startswith("error: --tag: tag 'two words' holds a space")
    # the engine's ingest (the MCP tool's): front matter tags first, then the call's
    (project / "pm.md").write_text(PM)
    memory.ingest(str(project / "pm.md"), "local", tags=("team-b",))
    found = memory.recall("database ran out of disk", tags=["team-b"])
    assert [h.chunk.tags for h in found.hits] == [("incident", "db", "team-b")]
