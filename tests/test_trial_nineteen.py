"""Findings of a fresh user's trial (trial 19, 2026-12-03).

- K2: a Markdown note whose front matter is not YAML (``title: "Broken "quoted" title"``,
  an unescaped quote) was stored whole, its ``---`` block as the text: its title, tags
  and date were lost without a word, and tag filters and ``--since`` missed the note.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_run import octomem

BROKEN = ('---\ntitle: "Broken "quoted" title"\ntags: [ops]\ndate: 2024-05-01\n---\n'
          "Rotate the TLS certificates every ninety days.\n")


def test_front_matter_that_is_not_yaml_skips_its_note_naming_the_line(project: Path) -> None:
    notes = project / "notes"
    notes.mkdir()
    (notes / "a.md").write_text(BROKEN)
    (notes / "b.md").write_text("---\ntitle: Pager\ntags: [ops]\n---\n"
                                "The pager rota changes on Mondays.\n")
    ran = octomem(project, "ingest", "notes", ok=False)
    assert ran.code == 1 and "Traceback" not in ran.err
    assert "skipped: notes/a.md:2: front matter is not valid YAML (" in ran.err
    assert "added 1, replaced 0, unchanged 0 documents" in ran.out
    found = json.loads(octomem(project, "search", "certificates pager rota", "--json",
                               "--tag", "ops").out)
    assert [h["title"] for h in found["hits"]] == ["Pager"]
    # the note alone: refused, nothing stored
    ran = octomem(project, "ingest", str(notes / "a.md"), ok=False)
    assert ran.code == 1
    assert ran.err.startswith(f"error: {notes / 'a.md'}:2: front matter is not valid YAML (")
    # fixed, it is read as front matter
    (notes / "a.md").write_text(BROKEN.replace('"Broken "quoted" title"',
                                               "'Broken \"quoted\" title'"))
    octomem(project, "ingest", "notes")
    found = json.loads(octomem(project, "search", "rotate TLS certificates", "--json",
                               "--tag", "ops").out)
    hit = found["hits"][0]
    assert (hit["title"], hit["text"], hit["event_time"]) == (
        'Broken "quoted" title', "Rotate the TLS certificates every ninety days.",
        "2024-05-01T00:00:00+00:00")


def test_a_block_without_keys_that_is_not_yaml_stays_text(project: Path) -> None:
    note = project / "rule.md"  # two thematic breaks around a line YAML cannot read
    note.write_text("---\n* deploys [freeze] on Fridays: {always\n---\nmore\n")
    octomem(project, "ingest", str(note))
    found = json.loads(octomem(project, "search", "when do deploys freeze?", "--json").out)
    assert found["hits"][0]["text"].startswith("---\n* deploys [freeze] on Fridays")
