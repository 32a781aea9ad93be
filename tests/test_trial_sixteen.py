"""Trial 16 (a fresh user's break-it pass), what it found and these fixes:

- F2: ``forget`` by text did not find a statement stored with an invisible character
  (``Zoë likes juice\\u200b``), which ``add`` had called the same statement;
- F5: a project's ``.octomem/`` that cannot be opened (made by ``sudo``, immutable, a
  read-only mount) took the global scope down too: search, status and even
  ``add --scope global`` failed;
- F3: a run of letters or digits without spaces (a hex dump) was one chunk of up to 2 MB;
- F13, F14: a Markdown export cut short by its reader ended with status 0; ``export
  --force`` onto a device said to pass ``--force``;
- F15: ``remember`` in a folder the user cannot write said only "Operation not permitted",
  and a server started in ``/`` took ``/`` as the project without a word;
- F24: a global root at the project's own ``.octomem/`` made both scopes one store;
- F23 (one of its items): a session-start heading was shown with no entry under it;
- F1: a future ``event_time`` on a supersede made it current at once without a word;
- F25: an import interrupted while embedding said only "interrupted", and the same import
  again embedded nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import apsw
import pytest
from cli_run import OCTOMEM, octomem
from test_read_only_store import unwritable

from octomem.engine.chunking import MAX_CHARS_PER_TOKEN
from octomem.engine.memory.facade import Memory, open_memory
from octomem.engine.memory.session_start import PER_SECTION, render
from octomem.engine.memory.transfer import ImportInterrupted, export_lines, import_lines


@pytest.mark.parametrize("invisible", ["\u200b", "\u00ad", "\ufeff", "\u2060"])
def test_forget_by_text_finds_a_statement_stored_with_an_invisible_character(
        memory: Memory, invisible: str) -> None:
    stored = memory.remember(f"Zoë likes juice{invisible}", kind="FACT")
    memory.remember("Tom likes tea", kind="FACT")
    outcome = memory.forget("Zoë likes juice", reason="wrong person")
    assert outcome.forgotten is not None
    scope, doc = outcome.forgotten
    assert (scope, doc.id, doc.text) == ("local", stored.document.id, f"Zoë likes juice{invisible}")
    texts = [h.chunk.text for h in memory.recall("who likes juice", count=False).hits]
    assert texts == ["Tom likes tea"]


def test_an_unopenable_local_store_leaves_the_global_scope_working(tmp_path: Path) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    global_root = {"OCTOMEM_GLOBAL_ROOT": str(tmp_path / "global")}
    octomem(elsewhere, "add", "The user prefers dark mode in every editor", "--scope",
            "global", "--kind", "PREFERENCE", **global_root)
    octomem(project, "add", "local fact: the ferry leaves at 7", **global_root)
    folder = project / ".octomem"
    store = folder / "octomem.sqlite3"
    with unwritable(folder), unwritable(store):
        ran = octomem(project, "search", "dark mode preference", spawn=True, **global_root)
        assert ran.out.splitlines()[1].split(maxsplit=3)[2:] == [
            "global", "The user prefers dark mode in every editor"], ran.out
        assert f"local scope not searched: cannot open the store {store}" in ran.out
        added = octomem(project, "add", "The user likes short answers", "--scope", "global",
                        spawn=True, **global_root)
        assert added.out.startswith("stored ") and "in the global scope" in added.out
        status = octomem(project, "status", ok=False, spawn=True, **global_root)
        assert "unreadable  cannot open the store" in status.out
        assert "documents        2 (2 current" in status.out
    found = octomem(project, "search", "ferry", "--json", **global_root).json()["hits"]
    assert [h["text"] for h in found] == ["local fact: the ferry leaves at 7"]


def test_a_run_without_spaces_is_chunked_in_characters_too(project: Path) -> None:
    """F3: WordPiece counts a word over 100 characters as one token, so an 800,000-character
    hex run was one chunk every hit returned whole (1.6 MB over MCP)."""
    digits = "0123456789abcdef" * 50_000
    (project / "hexdump.txt").write_text(f"The recovery PIN is 4417.\n\n{digits}\n")
    ingested = octomem(project, "ingest", "hexdump.txt", hashing=False).out
    store = apsw.Connection(str(project / ".octomem" / "octomem.sqlite3"))
    (count, longest), = store.execute("SELECT count(*), max(length(text)) FROM chunks")
    assert f"{count} chunks indexed" in ingested and 780 <= count <= 820, ingested
    assert 900 <= longest <= 254 * MAX_CHARS_PER_TOKEN  # ~1,000: cut at 4 a token of budget
    store.close()
    hits = octomem(project, "search", "what is the recovery PIN?", "--json",
                   hashing=False).json()["hits"]
    assert hits[0]["text"] == "The recovery PIN is 4417."


def test_an_export_cut_short_by_its_reader_is_no_success(project: Path) -> None:
    """F13: ``export --format md - | head -3`` of a 350 kB export ended with status 0: one
    write of the whole text was cut at the pipe's size without an error. F14: ``export
    --force /dev/stdout`` said "exists; pass --force"."""
    docs = project / "docs"
    docs.mkdir()
    for i in range(400):
        (docs / f"n{i}.md").write_text(f"# Note {i}\n\n" + f"word{i} text " * 60 + "\n")
    octomem(project, "ingest", "docs")
    for fmt in ("md", "jsonl"):
        reader = subprocess.Popen(
            [OCTOMEM, "--set", "pipeline.embedder=hashing", "export", "--format", fmt, "-"],
            cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert reader.stdout is not None and reader.stderr is not None
        first = [reader.stdout.readline() for _ in range(3)]
        reader.stdout.close()  # the reader has its lines and goes away, as head -3 does
        assert reader.wait(timeout=300) == 141, (fmt, reader.stderr.read())
        assert first[0].startswith(b"# octomem" if fmt == "md" else b'{"embedder"')
    whole = octomem(project, "export", "--format", "md", "-").out
    assert len(whole) > 300_000 and all(f"word{i} text" in whole for i in range(400))
    ran = octomem(project, "export", "--force", "/dev/null", ok=False)
    assert (ran.code, ran.err.strip()) == (1, (
        "error: /dev/null is not a regular file (a device, a pipe or a link to one); export "
        "replaces regular files only: use `-` to write to stdout"))


def test_a_project_folder_that_cannot_be_written_says_where_else(tmp_path: Path) -> None:
    """F15: ``remember`` in a folder the user cannot write failed with a bare "Operation not
    permitted"; a server started in ``/`` took ``/`` as the project without a word."""
    project = tmp_path / "project"
    project.mkdir()
    global_root = {"OCTOMEM_GLOBAL_ROOT": str(tmp_path / "global")}
    with unwritable(project):
        ran = octomem(project, "remember", "This repo uses pnpm", ok=False, spawn=True,
                      **global_root)
        assert ran.code == 1
        assert ran.err.strip().startswith(f"error: {project / '.octomem'}: ")
        assert ran.err.strip().endswith(
            ": the local scope's memory cannot be created there; start octomem in your "
            "project's folder or give it --project-root (for an MCP server: in the client's "
            "configuration), or write to the global scope"), ran.err
        octomem(project, "remember", "This repo uses pnpm", "--scope", "global", spawn=True,
                **global_root)
    assert not (project / ".octomem").exists()
    served = subprocess.run([OCTOMEM, "serve"], cwd="/", stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, **global_root})
    assert served.stderr.startswith(
        "octomem: warning: the project is / (the server was started there, and no folder "
        "above holds .octomem/ or .git), so the local scope would be /.octomem; give the server "
        "--project-root YOUR_PROJECT in the client's configuration\n"), served.stderr


def test_a_global_scope_in_the_project_s_own_folder_is_refused(project: Path) -> None:
    """F24: with the global root at the project's ``.octomem/`` both scopes were one store:
    every statement was found twice, and ``forget`` refused, listing one id twice."""
    for env, args in (({"OCTOMEM_GLOBAL_ROOT": str(project / ".octomem")}, ()),
                      ({}, ("--global-root", ".octomem"))):
        ran = octomem(project, *args, "add", "Same-file test: global fact", "--scope",
                      "global", ok=False, **env)
        assert (ran.code, ran.err.strip()) == (1, (
            "error: global_root (--global-root, OCTOMEM_GLOBAL_ROOT or the config file): "
            f"{project / '.octomem'} is the local scope of the project {project} too, so both "
            "scopes would be one store (every statement found twice, forget refused); point "
            "the global scope at another folder, or use another project folder")), ran.err
    assert not (project / ".octomem").exists()


def test_session_start_shows_no_heading_without_an_entry(memory: Memory) -> None:
    """F23: ``session-start --max-bytes 600`` printed ``## Most recalled`` with no entry
    under it, glued to the list before it."""
    memory.remember("Always answer in British English.", kind="RULE")
    memory.remember("The user prefers short answers.", kind="PREFERENCE")
    memory.remember("The release train leaves on Thursdays.", kind="FACT")
    for i in range(PER_SECTION):  # newer: the release fact is not among the recent ones
        memory.remember(f"Deploy step {i}: the staging host is kestrel-{i}.", kind="FACT")
    memory.recall("when does the release train leave?", count=True)
    whole = render(memory, 8192)
    assert "## Most recalled" in whole and "## Recent" in whole
    for budget in range(200, 1400, 5):
        lines = render(memory, budget).splitlines()
        for i, line in enumerate(lines):
            if line.startswith("## "):
                assert lines[i - 1] == "" and lines[i + 1].startswith("- "), (budget, lines)


def test_a_query_that_starts_with_a_dash_is_told_about_double_dash(project: Path) -> None:
    ran = octomem(project, "search", "-rollback", ok=False)
    assert (ran.code, ran.err.strip()) == (2, (
        "error: no such option: -r; text that starts with '-' goes after `--` (`octomem "
        "search -- -rollback`); see `octomem search --help`"))
    ran = octomem(project, "add", "--version flag", ok=False)
    assert "(`octomem add -- '--version flag'`)" in ran.err
    assert "goes after" not in octomem(project, "status", "--bogus", ok=False).err


def test_an_import_interrupted_while_embedding_says_so_and_resumes(
        memory: Memory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """F25: Ctrl-C while an import embedded said only "interrupted", and the same import
    again embedded nothing (its documents were unchanged)."""
    for i in range(120):
        memory.remember(f"Deploy note {i}: the staging host kestrel-{i} restarts nightly.")
    lines = [json.dumps(line) for line in export_lines(memory, "local")]
    fresh = open_memory(overrides={"pipeline": {"embedder": "hashing"}},
                        project_root=tmp_path / "fresh", global_root=tmp_path / "g2")
    try:
        (tmp_path / "fresh").mkdir()
        pipeline = fresh.scopes.require("local", create=True)
        embed, calls = pipeline.arms.embedder.embed_documents, []

        def interrupted_on_the_second_batch(texts):  # Ctrl-C after the first batch
            calls.append(len(texts))
            if len(calls) == 2:
                raise KeyboardInterrupt
            return embed(texts)

        monkeypatch.setattr(pipeline.arms.embedder, "embed_documents",
                            interrupted_on_the_second_batch)
        with pytest.raises(ImportInterrupted) as stop:
            import_lines(fresh, lines, "export.jsonl", "local")
        assert len(stop.value.report.added) == 120
        missing = pipeline.arms.semantic.missing_count()
        assert 0 < missing == 120 - calls[0]
        monkeypatch.setattr(pipeline.arms.embedder, "embed_documents", embed)
        again = import_lines(fresh, lines, "export.jsonl", "local")
        assert (len(again.unchanged), again.embedded) == (120, missing)
        assert pipeline.arms.semantic.missing_count() == 0
    finally:
        fresh.close()


def test_a_future_event_time_says_what_current_means(project: Path) -> None:
    """F1: a supersede with a future ``event_time`` was the current answer at once, while
    ``--as-of`` today answered with the statement it superseded, without a word."""
    old = octomem(project, "add", "Production database is PostgreSQL 15.4", "--kind", "FACT",
                  "--event-time", "2026-03-01", "--json").json()["id"]
    ran = octomem(project, "add", "Production database is PostgreSQL 16.1", "--kind", "FACT",
                  "--event-time", "2099-12-09", "--supersedes", old, "--json")
    assert ran.json()["message"] == (
        "event_time 2099-12-09T00:00:00+00:00 is in the future: this statement is the current "
        "answer now (as a supersede is), while `as_of` a time before 2099-12-09T00:00:00+00:00 "
        f"answers with the one it supersedes ({old}); to keep that one current until then, "
        "remember the change when it happens")
    said = octomem(project, "add", "We move offices", "--event-time", "2099-01-01").out
    assert " ".join(said.split()).endswith(
        "note: event_time 2099-01-01T00:00:00+00:00 is in the future: the statement is "
        "current now, and `--as-of` before then does not find it")
    assert "note:" not in octomem(project, "add", "The office moved in 2025",
                                  "--event-time", "2025-06-01").out
