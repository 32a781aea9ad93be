"""What the third fresh-user trial found in the CLI, run as a user runs it (the console
entry point, a real SQLite store): ``--format`` errors that say what the format expected,
usage errors worded alike with status 2, empty answers that say why, ``--max-tokens``
cut lists that name hits as the hit lines do, ``config KEY``, ``--as-of`` marks, reindex
after Ctrl-C, narrow terminals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_run import octomem

CHAT = [{"speaker": "Ana", "text": "Which train should we take to Porto?", "session": "1",
         "time": "2024-05-01T10:00:00Z"},
        {"speaker": "Ben", "text": "The 9:09 Alfa Pendular from Santa Apolonia.",
         "session": "1", "time": "2024-05-01T10:01:00Z"}]
CLAUDE = [{"type": "user", "sessionId": "s1", "uuid": "u1", "timestamp": "2025-09-01T09:00:00Z",
           "message": {"role": "user", "content": "Why does test_upload fail on CI?"}}]


def write_jsonl(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# --- finding 10: --format errors ------------------------------------------------------


def test_format_chat_on_a_markdown_file_says_it_reads_only_jsonl(tmp_path: Path) -> None:
    note = tmp_path / "deploy.md"
    note.write_text("# Deploying\n\nRun make deploy.\n", encoding="utf-8")
    ran = octomem(tmp_path, "ingest", "--format", "chat", str(note), ok=False)
    assert ran.code == 1
    assert ran.err == (f"error: {note}: --format chat reads only .jsonl transcripts; leave "
                       "out --format to ingest it as text\n")
    assert "(reads " not in ran.err  # not the list of suffixes that holds .md


def test_format_claude_code_on_a_chat_transcript_says_what_it_expected(tmp_path: Path) -> None:
    chat = write_jsonl(tmp_path / "trip.jsonl", CHAT)
    ran = octomem(tmp_path, "ingest", "--format", "claude-code", str(chat), ok=False)
    assert ran.code == 1
    assert ran.err.startswith(f"error: {chat}: not a Claude Code session (its first record "
                              "has no 'sessionId' and no Claude Code 'type'); it reads as a "
                              "chat transcript: leave out --format or give --format chat")
    assert "no turns" not in ran.err
    assert "no hits" in octomem(tmp_path, "search", "train to Porto").out  # nothing stored


def test_format_chat_on_a_claude_code_session_says_what_it_expected(tmp_path: Path) -> None:
    session = write_jsonl(tmp_path / "s1.jsonl", CLAUDE)
    ran = octomem(tmp_path, "ingest", "--format", "chat", str(session), ok=False)
    assert "not a chat transcript" in ran.err and "--format claude-code" in ran.err
    assert "unknown field" not in ran.err
    ok = octomem(tmp_path, "ingest", "--format", "claude-code", str(session))
    assert "added 1" in ok.out


# --- finding 12: usage errors worded alike, status 2 ----------------------------------


@pytest.mark.parametrize(("args", "line"), [
    (("ingest",), "error: give files or folders to ingest, or --beir DIR; see "
                  "`octomem ingest --help`"),
    (("add", "x", "--tag"), "error: option '--tag' requires an argument; see "
                            "`octomem add --help`"),
    (("ingest", "--format", "slack", "."), "error: --format: must be one of auto, text, "
                                           "chat, claude-code, got 'slack'; see "
                                           "`octomem ingest --help`"),
    (("search", "x", "--top-k", "0"), "error: --top-k: must be at least 1, got 0; see "
                                      "`octomem search --help`"),
    (("session-start", "--max-bytes", "10"), "error: --max-bytes: must be at least 512, got "
                                             "10; see `octomem session-start --help`"),
    (("log", "tail", "-n", "30000"), "error: --lines: must be from 1 to 20,000, got 30,000; "
                                     "see `octomem log tail --help`"),
    (("--data-dir",), "error: option '--data-dir' requires an argument; see "
                      "`octomem --help`"),
])
def test_usage_errors_read_alike(tmp_path: Path, args: tuple[str, ...], line: str) -> None:
    ran = octomem(tmp_path, *args, ok=False, hashing=False)
    assert ran.err == line + "\n"
    assert ran.out == ""
    assert ran.code == 2  # a bad value, whether click or the engine checks it
    assert not (tmp_path / ".octomem").exists()  # nothing stored


# --- finding 15: import of a transcript points to ingest ------------------------------


def test_import_of_a_chat_transcript_suggests_ingest(tmp_path: Path) -> None:
    chat = write_jsonl(tmp_path / "trip.jsonl", CHAT)
    ran = octomem(tmp_path, "import", str(chat), ok=False)
    assert ran.err == (f"error: {chat}:1: not an octomem JSONL export (format 1 or 2); it "
                       "reads as a conversation transcript: to add it, use `octomem ingest`\n")
    markdown = tmp_path / "mem.md"
    octomem(tmp_path, "add", "A statement to export")
    octomem(tmp_path, "export", "--format", "md", str(markdown))
    ran = octomem(tmp_path, "import", str(markdown), ok=False)
    assert ran.err.endswith("; the Markdown export cannot be imported; export with --format "
                            "jsonl\n")
    text = tmp_path / "huge.txt"  # trial 7, #15: plain text is not taken for Markdown
    text.write_text("Just some notes\nabout the project\n", encoding="utf-8")
    ran = octomem(tmp_path, "import", str(text), ok=False)
    assert ran.err == (f"error: {text}:1: not an octomem JSONL export (format 1 or 2); it is "
                       "not JSON: to add a text file, use `octomem ingest`\n")


# --- finding 20: help written for its own context --------------------------------------


def readme_quick_start() -> str:
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return " ".join(section.replace(".venv/bin/octomem", "octomem").split())


def test_top_level_help_lists_remember_and_recall_and_the_readmes_quick_start() -> None:
    text = octomem(Path.cwd(), "--help", hashing=False, COLUMNS="250").out
    assert any(line.strip("│ ").startswith("remember ") for line in text.splitlines())
    assert any(line.strip("│ ").startswith("recall ") for line in text.splitlines())
    said = " ".join(text.split("Quick start", 1)[1].split("╭", 1)[0].split())
    said = said.removeprefix("(from a clone, as in the README): ")
    commands = [part.strip(" ,.") for part in said.split(", then ")]
    assert len(commands) == 2 and all(c.startswith("octomem ") for c in commands), said
    for command in commands:
        assert command in readme_quick_start(), command


def test_verify_help_says_where_repair_is_described(tmp_path: Path) -> None:
    text = octomem(tmp_path, "verify", "--help", hashing=False, COLUMNS="200").out
    assert "see below" not in text and "as the description above says" in text
    octomem(tmp_path, "add", "a statement")
    assert octomem(tmp_path, "verify", "--scope", "local").out == (
        "verified the local scope: every row can be shown\n")


# --- finding 24: ingest progress ends at N/N; nouns agree ------------------------------


def test_ingest_progress_ends_at_n_of_n_with_a_skipped_file(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "deploy.md").write_text("# Deploying\n\nRun make deploy.\n", encoding="utf-8")
    (notes / "empty.md").write_text("", encoding="utf-8")
    # at a terminal (rich's bar, drawn once at the end when not interactive); piped, a
    # quick ingest says only what it did (trial 16 F23)
    ran = octomem(tmp_path, "ingest", str(notes), TTY_COMPATIBLE="1", TTY_INTERACTIVE="0",
                  NO_COLOR="1")
    progress = [line for line in ran.err.splitlines() if line.startswith("indexing")]
    assert len(progress) == 1 and " 2/2 " in progress[0], ran.err
    assert "indexing" not in octomem(tmp_path, "ingest", str(notes)).err
    assert "skipped: " in ran.err and "empty.md: empty file" in ran.err
    again = octomem(tmp_path, "ingest", str(notes))
    assert "added 0, replaced 0, unchanged 1 document; 0 chunks indexed" in again.out


# --- finding 21: config KEY --------------------------------------------------------------


def test_config_key_shows_one_setting_its_layer_and_meaning(tmp_path: Path) -> None:
    ran = octomem(tmp_path, "--set", "retrieval.top_k=7", "config", "retrieval.top_k",
                  hashing=False, COLUMNS="100")
    lines = ran.out.splitlines()
    assert lines[-2:] == ["retrieval.top_k = 7  retrieval · --set", "    hits in an answer"]
    assert len(lines) == 4  # the two-line header says what the columns are
    section = octomem(tmp_path, "config", "arms.fts5", "--json", hashing=False).json()
    assert section["settings"] and all(k.startswith("arms.fts5.") for k in section["settings"])
    assert section["settings"]["arms.fts5.stopwords"]["layer"] == "default"


@pytest.mark.parametrize(("key", "line"), [
    ("retrieval.topk", "error: unknown setting 'retrieval.topk'; did you mean "
                       "'retrieval.top_k'?\n"),
    ("retreival", "error: unknown setting 'retreival'; did you mean 'retrieval'?\n"),
    ("zzzz", "error: unknown setting 'zzzz'; `octomem config` lists them all\n"),
])
def test_config_unknown_key_is_one_line_naming_the_closest(tmp_path: Path, key: str,
                                                           line: str) -> None:
    ran = octomem(tmp_path, "config", key, ok=False, hashing=False)
    assert (ran.code, ran.out, ran.err) == (1, "", line)


# --- findings 11, 16: an empty answer says why; status creates nothing -------------------


def test_status_creates_neither_scope_and_an_empty_store_says_so(tmp_path: Path) -> None:
    data = tmp_path / "fresh-global"
    ran = octomem(tmp_path, "--data-dir", str(data), "status", COLUMNS="200")
    flat = " ".join(ran.out.split())
    assert (f"global {data} store none yet: the first write into this scope (add, remember, "
            "ingest, import) creates it; a read never does arms storage sqlite") in flat, flat
    assert "model hashing-v1-dim384 (as configured) semantic available" in flat
    assert not data.exists() and not (tmp_path / ".octomem").exists()
    assert octomem(tmp_path, "--data-dir", str(data), "status", "--json").json()[
        "scopes"]["global"]["exists"] is False
    empty = octomem(tmp_path, "--data-dir", str(data), "search", "anything")
    assert empty.out.splitlines()[0] == ("no hits for 'anything': nothing is stored in the "
                                         "local and global scopes; ingest or add first")


def test_a_kind_no_document_has_is_named_as_the_reason(tmp_path: Path) -> None:
    octomem(tmp_path, "add", "Tests run with make check", "--kind", "FACT")
    octomem(tmp_path, "add", "The user prefers tabs", "--kind", "PREFERENCE", "--scope",
            "global")
    ran = octomem(tmp_path, "search", "tests", "--kind", "BAR")
    assert ran.code == 0
    assert ran.out.splitlines()[0] == ("no hits for 'tests': no stored document has kind BAR "
                                       "(stored kinds: FACT, PREFERENCE)")
    assert "make check" in octomem(tmp_path, "search", "tests", "--kind", "FACT").out
    only_local = octomem(tmp_path, "search", "tabs", "--scope", "global", "--kind", "FACT")
    assert "no stored document has kind FACT (stored kinds: PREFERENCE)" in only_local.out


# --- finding 23: --as-of marks only what was superseded by then --------------------------


def test_as_of_does_not_mark_the_statement_current_then_as_superseded(tmp_path: Path) -> None:
    old = octomem(tmp_path, "add", "The database is PostgreSQL 13", "--kind", "FACT",
                  "--event-time", "2023-01-01", "--json").json()["id"]
    octomem(tmp_path, "add", "The database is PostgreSQL 16", "--kind", "FACT",
            "--supersedes", old, "--event-time", "2024-01-01")
    then = octomem(tmp_path, "search", "database version", "--as-of", "2023-06-30").out
    assert "The database is PostgreSQL 13" in then and "(superseded)" not in then
    assert "PostgreSQL 16" not in then
    history = octomem(tmp_path, "search", "database version", "--include-superseded").out
    assert "(superseded) The database is PostgreSQL 13" in history
    assert "(superseded) The database is PostgreSQL 16" not in history


# --- finding 26: a narrow terminal -------------------------------------------------------


@pytest.mark.parametrize("columns", [30, 40])
def test_explain_at_a_narrow_width_fits_and_ends_no_line_in_a_space(tmp_path: Path,
                                                                    columns: int) -> None:
    octomem(tmp_path, "add", "The database is PostgreSQL 16 on the staging host", "--kind",
            "FACT")
    octomem(tmp_path, "add", "The database backups run nightly", "--scope", "global")
    out = octomem(tmp_path, "search", "database", "--explain", COLUMNS=str(columns)).out
    lines = out.splitlines()
    assert all(len(line) <= columns for line in lines), out
    assert not [line for line in lines if line != line.rstrip()], out
    header = lines[1]
    assert header.startswith("#") and "rel" in header and "scope" in header
    if columns == 30:  # fts5 fits beside the rank, relevance and scope; sqlite-vec does not
        assert header.split() == ["#", "rel", "scope", "fts5"]
        said = " ".join(line for line in lines[3:7] if not line[:1].isdigit())
        assert said.startswith("no room for sqlite-vec") and "--json has every column" in said
    assert any(line.startswith("scopes: local, global") for line in lines)


# --- finding 14: --max-tokens names what it cut as the hit lines do ---------------------


def test_max_tokens_lists_each_cut_hit_with_rank_size_scope_and_snippet(tmp_path: Path) -> None:
    for i, fruit in enumerate(["kiwi", "mango", "pear", "plum"]):
        octomem(tmp_path, "add", f"Rehearsal {i}: the staging database was restored with "
                f"{fruit} notes and a long paragraph of detail about the restore procedure.")
    out = octomem(tmp_path, "--set", "retrieval.relevance_floor=0", "--set",
                  "retrieval.relative_floor=0", "search", "staging database restored",
                  "--max-tokens", "40", COLUMNS="80").out
    lines = out.splitlines()
    kept = [line for line in lines if line.startswith("1  ")]
    assert len(kept) == 1 and "Rehearsal" in kept[0]  # the kept hit shows its text
    lead = next(i for i, line in enumerate(lines) if line.startswith("about "))
    assert "left out these (rank before the cut, tokens):" in " ".join(lines[lead:lead + 2])
    cut_lines = [line for line in lines[lead:] if line.lstrip().startswith("#")]
    assert len(cut_lines) == 3
    for line in cut_lines:
        rank, tokens, scope, text = line.split(maxsplit=3)
        assert rank[1:].isdigit() and int(rank[1:]) >= 2 and tokens.isdigit()
        assert scope == "local" and text.startswith("Rehearsal ")
        assert len(line) <= 80 and "file:" not in line


# --- finding 18: reindex after Ctrl-C says what it did in every scope --------------------


def test_interrupted_reindex_says_per_scope_what_it_embedded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from octomem.plugins.hashing.embedder import HashingEmbedder

    keyword_only = ("--set", "pipeline.embedder=", "--set", "pipeline.semantic=")
    for i in range(6):
        octomem(tmp_path, *keyword_only, "add", f"local statement number {i}", hashing=False)
        octomem(tmp_path, *keyword_only, "add", f"global statement number {i}", "--scope",
                "global", hashing=False)
    real, calls = HashingEmbedder.embed_documents, []

    def ctrl_c_on_the_fourth_batch(self: HashingEmbedder, texts: list[str]) -> object:
        calls.append(len(texts))
        if len(calls) == 4:  # local's 3 batches done, global's first in progress
            raise KeyboardInterrupt
        return real(self, texts)

    monkeypatch.setattr(HashingEmbedder, "embed_documents", ctrl_c_on_the_fourth_batch)
    ran = octomem(tmp_path, "--set", "retrieval.embed_batch_size=2", "reindex", ok=False,
                  COLUMNS="60")
    assert ran.code == 130
    assert ran.out.splitlines()[0].startswith("embedding for hashing-")
    assert "local: embedded 6 chunks; 0 without a vector" in ran.out.splitlines()
    assert ran.err.splitlines()[-4:] == [
        "local: embedded 6 chunks before the interrupt; 0 without a vector",
        "global: embedded 0 chunks before the interrupt; 6 without a vector",
        "what was embedded is kept: run `octomem reindex` again to embed the rest",
        "interrupted"]
    monkeypatch.setattr(HashingEmbedder, "embed_documents", real)
    again = octomem(tmp_path, "reindex", COLUMNS="60").out.splitlines()
    assert "global: embedded 6 chunks; 0 without a vector" in again
    assert all(len(line) <= 60 for line in again[1:])  # the model id has its own line
