"""Trial 14 (a fresh user's break-it pass), what it found and these fixes:

- F11, F15: a text of invisible characters only (a zero-width space) was stored as a
  statement or a turn, and run as a query, while ``"   "`` was refused as empty;
- F2: ``forget`` before anything was stored said "nothing in the no existing scope";
- F12: ``forget notes/a.md`` did not find the file ingested from that path;
- F14: a read turned an empty (0-byte) ``octomem.sqlite3`` into a 160 kB store;
- F13: an answer that searched nothing said ``semantic_available: false``;
- F3: ``reindex`` with no store printed nothing.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from cli_run import octomem

ZWSP = "\u200b"


def _stored(project: Path) -> list[str]:
    with sqlite3.connect(project / ".octomem" / "octomem.sqlite3") as db:
        return [row[0] for row in db.execute("SELECT id FROM documents ORDER BY id")]


def test_invisible_only_text_is_empty_everywhere(project: Path) -> None:
    for text in (ZWSP, " \u00ad\ufeff ", "\u200d"):
        ran = octomem(project, "add", text, ok=False)
        assert ran.code == 2 and "TEXT: empty; give the statement to remember" in ran.err
        ran = octomem(project, "search", text, ok=False)
        assert ran.code == 2 and "QUERY: empty" in ran.err, ran.err
    assert not (project / ".octomem" / "octomem.sqlite3").exists()  # nothing was written
    chat = project / "chat.jsonl"
    chat.write_text("".join(json.dumps(row) + "\n" for row in (
        {"speaker": "Ana", "text": "We land at 14:05 on Friday."},
        {"speaker": "Ben", "text": ZWSP},  # says nothing, as "" or null: left out
        {"speaker": "Ana", "text": "Then dinner at eight."})), encoding="utf-8")
    octomem(project, "ingest", "chat.jsonl")
    turns = octomem(project, "search", "dinner", "--json").json()["hits"]
    assert [h["text"] for h in turns][:1] == ["Ana: Then dinner at eight."]
    assert _stored(project) == ["chat:0", "chat:1"]  # the blank line took no position
    empty = project / "empty.md"
    empty.write_text(f"{ZWSP}\n\u00ad\n", encoding="utf-8")
    ran = octomem(project, "ingest", "empty.md", ok=False)
    assert "empty.md: empty file" in ran.out + ran.err, (ran.out, ran.err)


def test_forget_with_nothing_stored_says_so(project: Path) -> None:
    ran = octomem(project, "forget", "some text", ok=False)
    assert ran.code == 1
    assert "nothing is stored yet (no scope has a store), so nothing has the id or exact " \
           "text 'some text'" in ran.err, ran.err
    assert "no existing scope" not in ran.err


def test_forget_takes_an_ingested_files_path(project: Path) -> None:
    notes = project / "notes"
    notes.mkdir()
    (notes / "a.md").write_text("# Deploys\n\nWe deploy on Tuesdays only.\n", encoding="utf-8")
    (notes / "b.md").write_text("# Lunch\n\nLunch is at noon.\n", encoding="utf-8")
    octomem(project, "ingest", "notes")
    before = _stored(project)
    assert len(before) == 2 and all(i.startswith("file:") for i in before)
    gone = octomem(project, "forget", "notes/a.md", "--reason", "outdated").out
    assert "forgot file:" in gone, gone
    left = _stored(project)
    assert len(left) == 1 and set(left) < set(before)
    hits = octomem(project, "search", "when do we deploy", "--json").json()["hits"]
    assert all("Tuesdays" not in h["text"] for h in hits)
    again = octomem(project, "ingest", "notes")  # a forgotten file stays out
    assert "not re-added" in again.out + again.err and _stored(project) == left
    missing = octomem(project, "forget", "notes/zzz.md", ok=False)
    assert "nothing stored was ingested from" in missing.err, missing.err  # trial 17 G9


def test_a_read_leaves_an_empty_store_file_alone(project: Path) -> None:
    store = project / ".octomem" / "octomem.sqlite3"
    store.parent.mkdir()
    store.touch()
    for args in (("search", "anything"), ("status",)):
        octomem(project, *args)
        assert store.stat().st_size == 0, args
    assert "none yet" in octomem(project, "status").out
    octomem(project, "add", "The café opens at nine")  # the first write makes the store
    assert store.stat().st_size > 0
    hits = octomem(project, "search", "café", "--json").json()["hits"]
    assert [h["text"] for h in hits] == ["The café opens at nine"]


def test_a_time_that_is_neither_text_nor_number_names_both_rules(project: Path) -> None:
    """F7: ``"time": true`` said 'a time must be a string, got bool', while numbers
    (epoch seconds or milliseconds) are accepted too."""
    chat = project / "tb.jsonl"
    chat.write_text('{"speaker":"Ana","text":"a","time":true}\n'
                    '{"speaker":"Ana","text":"b","time":["x"]}\n', encoding="utf-8")
    ran = octomem(project, "ingest", "tb.jsonl", ok=False)
    rule = ("'time': a time is an ISO-8601 string or an epoch number (seconds; milliseconds "
            "from 10^11 on), got ")
    assert ran.code == 1 and ran.err.strip() == (
        f"error: tb.jsonl:1: {rule}true; tb.jsonl:2: {rule}[\"x\"]"), ran.err
    assert not (project / ".octomem").exists()  # nothing of the file stored


def test_verify_with_no_store_says_there_is_nothing_to_verify(project: Path) -> None:
    """F3: ``verify`` said 'verified the local and global scopes: every row can be shown'
    when neither had a store."""
    ran = octomem(project, "verify")
    assert " ".join(ran.out.split()) == (
        "nothing to verify: no store yet in the local or global scopes (the first write "
        "creates one; verify creates none)"), ran.out
    assert not (project / ".octomem").exists()
    octomem(project, "add", "Tabs for indentation")
    assert "verified the local scope: every row can be shown" in \
        octomem(project, "verify", "--scope", "local").out


def test_reindex_with_no_store_says_there_is_nothing_to_reindex(project: Path) -> None:
    """F3: ``reindex`` with no store printed nothing at all (status 0)."""
    ran = octomem(project, "reindex")
    assert (ran.code, " ".join(ran.out.split())) == (0, (
        "nothing to reindex: no store yet in the local or global scopes (the first write "
        "creates one; reindex creates none)")), ran.out
    assert " ".join(octomem(project, "reindex", "--scope", "local").out.split()) == (
        "nothing to reindex: no store yet in the local scope (the first write creates one; "
        "reindex creates none)")
    assert not (project / ".octomem").exists()
    octomem(project, "add", "Tabs for indentation")
    assert "local: embedded 0 chunks; 0 without a vector" in \
        " ".join(octomem(project, "reindex", "--scope", "local").out.split())


def test_an_answer_that_searched_nothing_says_semantic_as_configured(project: Path) -> None:
    """F13: on a fresh install ``search --json`` said ``semantic_available: false`` beside
    a ready model (``status``: semantic available); with the semantic arm off it is
    false."""
    fresh = octomem(project, "search", "tabs", "--json").json()
    assert (fresh["hits"], fresh["arms_ran"], fresh["semantic_available"]) == ([], [], True)
    assert fresh["nothing_to_rank"] == ("nothing is stored in the local and global scopes; "
                                        "ingest or add first")
    octomem(project, "add", "Use tabs for indentation", "--kind", "PREFERENCE")
    decided = octomem(project, "search", "tabs", "--kind", "FACT", "--json").json()
    assert (decided["arms_ran"], decided["semantic_available"]) == ([], True)
    ran = octomem(project, "search", "tabs", "--json").json()
    assert (ran["arms_ran"], ran["semantic_available"]) == (["fts5", "sqlite-vec"], True)
    off = octomem(project, "--set", "pipeline.semantic=", "search", "tabs", "--kind", "FACT",
                  "--json").json()
    assert (off["arms_ran"], off["semantic_available"]) == ([], False)


def test_composed_and_decomposed_tags_and_speakers_are_one(project: Path) -> None:
    """F10: a tag or a speaker's name sent decomposed (``cafe`` + U+0301, as macOS file
    names and some agents write it) was another tag, another speaker, than the one typed
    composed: "stored tags: café, café", and the ranking changed with the query's form."""
    composed, decomposed = "caf\u00e9", "cafe\u0301"
    octomem(project, "add", "Espresso machine is on floor 2", "--tag", decomposed)
    octomem(project, "add", "Tea kettle on floor 3", "--tag", composed)
    for form in (composed, decomposed):
        hits = octomem(project, "search", "floor", "--tag", form, "--json").json()["hits"]
        assert sorted(h["text"] for h in hits) == [
            "Espresso machine is on floor 2", "Tea kettle on floor 3"], form
        assert {tuple(h["tags"]) for h in hits} == {(composed,)}
    said = octomem(project, "search", "floor", "--tag", "cafe").out
    assert "(stored tags: café; tags match exactly" in " ".join(said.split()), said
    chat = project / "trip.jsonl"
    chat.write_text("".join(json.dumps(row) + "\n" for row in (
        {"speaker": "Jos\u00e9", "text": "I booked the train to Porto."},
        {"speaker": "Ana", "text": "Did you pack?"},
        {"speaker": "Jose\u0301", "text": "I also packed the umbrella."})), encoding="utf-8")
    octomem(project, "ingest", "trip.jsonl")
    ranked = {}
    for name in ("Jos\u00e9", "Jose\u0301"):
        hits = octomem(project, "search", f"what did {name} pack?", "--json").json()["hits"]
        ranked[name] = [(h["id"], h["relevance"]) for h in hits]
        assert hits[0]["text"] == "Jos\u00e9: I also packed the umbrella."
        assert {h["turn"]["speaker"] for h in hits if h.get("turn")} == {"Jos\u00e9", "Ana"}
    assert ranked["Jos\u00e9"] == ranked["Jose\u0301"]


def test_a_successor_of_a_forgotten_statement_says_it_was_forgotten(project: Path) -> None:
    """Trial 13 M2: after ``forget`` of a superseded statement, the Markdown export, the
    ``octomem://memory`` resource and the browser view's memory page still said
    "supersedes `<id>`", an id no page shows."""
    from octomem.engine.memory.facade import open_memory
    from octomem.engine.memory.view import scope_markdown

    old = octomem(project, "add", "The database is PostgreSQL 15", "--kind", "FACT").out.split()[1]
    new = octomem(project, "add", "The database is PostgreSQL 16", "--kind", "FACT",
                  "--supersedes", old).out.split()[1]
    kept = octomem(project, "export", "--format", "md", "-").out
    assert f"`{new}` · supersedes `{old}`*" in kept and "## Superseded" in kept
    octomem(project, "forget", old)
    exported = octomem(project, "export", "--format", "md", "-").out
    assert f"`{new}` · supersedes a forgotten statement (`{old}`)*" in exported, exported
    assert "## Superseded" not in exported
    memory = open_memory(overrides={"pipeline": {"embedder": "hashing"}},
                         project_root=project, global_root=project.parent / "global")
    try:
        assert f"supersedes a forgotten statement (`{old}`)" in scope_markdown(memory, "local")
    finally:
        memory.close()
