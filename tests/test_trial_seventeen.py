"""Trial 17 (a fresh user's break-it pass), what it found and these fixes:

- G4: a project's ``.octomem/`` was not git-ignored: ``git add -A`` committed the memory
  (and a push published it), where ``forget`` cannot reach it;
- G1: ``--data-dir`` on the command line lost to ``OCTOMEM_GLOBAL_ROOT`` without a word, so
  the quick start wrote its demo into the user's real global memory;
- G3: a line of deeply nested JSON (a tool's output in a Claude Code transcript) ended a
  folder ingest, a BEIR ingest and an import with a ``RecursionError`` traceback, and the
  MCP ``ingest`` tool said only "Error executing tool ingest";
- G19: an MCP answer's text content (what the agent's model reads) was the result's JSON
  indented, every null field and the timings included: 8-13x the hits' own text;
- G8: the blocks Claude Code puts into a user's record (``<system-reminder>`` with the
  project's ``CLAUDE.md``, todo nudges, a file the agent read) were stored as the user's
  words.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import apsw
import pytest
from cli_run import octomem
from mcp_stdio import stdio_client

from octomem.engine.files import STORE_GITIGNORE
from octomem.engine.memory.facade import Memory
from octomem.engine.memory.json_line import LineNotJSON, parse_line
from octomem.engine.memory.transcripts import read_claude_code

#: Nested past Python's recursion limit (~1,000): what its ``json`` reader cannot follow.
DEEP = "[" * 5000 + "]" * 5000

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


@needs_git
def test_git_leaves_a_new_project_memory_out(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    (repo / "main.py").write_text("print('hi')\n")
    ran = octomem(repo, "add", "Tests run with make check",
                  OCTOMEM_GLOBAL_ROOT=str(tmp_path / "global"))
    assert ran.code == 0, ran.err
    assert (repo / ".octomem" / ".gitignore").read_text() == STORE_GITIGNORE
    assert (repo / ".octomem" / ".gitignore").stat().st_mode & 0o777 == 0o600
    assert git(repo, "status", "--short", "--untracked-files=all") == "?? main.py\n"
    git(repo, "add", "-A")
    assert git(repo, "diff", "--cached", "--name-only") == "main.py\n"
    # the memory still answers: the file is beside the store, not in its way
    found = octomem(repo, "search", "how do tests run?", "--json",
                    OCTOMEM_GLOBAL_ROOT=str(tmp_path / "global")).json()
    assert [h["text"] for h in found["hits"]][:1] == ["Tests run with make check"]


def test_an_existing_folder_gets_no_gitignore(tmp_path: Path) -> None:
    """A folder the user made (or whose ``.gitignore`` they deleted to share the memory on
    purpose) is left as it is."""
    project = tmp_path / "project"
    (project / ".octomem").mkdir(parents=True)
    ran = octomem(project, "add", "The ferry leaves at 7",
                  OCTOMEM_GLOBAL_ROOT=str(tmp_path / "global"))
    assert ran.code == 0, ran.err
    # the store and the embedding lock beside it (README), no .gitignore
    assert sorted(p.name for p in (project / ".octomem").iterdir()) == [
        "embedding.lock", "octomem.sqlite3"]


def test_the_global_folder_octomem_creates_is_ignored_too(tmp_path: Path) -> None:
    project, global_root = tmp_path / "project", tmp_path / "deep" / "global"
    project.mkdir()
    ran = octomem(project, "add", "The user prefers dark mode", "--scope", "global",
                  OCTOMEM_GLOBAL_ROOT=str(global_root))
    assert ran.code == 0, ran.err
    assert (global_root / ".gitignore").read_text() == STORE_GITIGNORE
    assert not (tmp_path / "deep" / ".gitignore").exists()  # only the store's own folder


def test_data_dir_on_the_command_line_beats_the_environment(tmp_path: Path) -> None:
    project, real = tmp_path / "clone", tmp_path / "real"
    demo = project / ".octomem-demo"
    project.mkdir()
    env = {"OCTOMEM_GLOBAL_ROOT": str(real)}
    ran = octomem(project, "--data-dir", str(demo), "add", "--scope", "global",
                  "Kestrel uploads use 8 MiB parts", **env)
    assert ran.code == 0, ran.err
    assert (demo / "octomem.sqlite3").is_file()
    assert not real.exists()  # the user's real global memory was not touched
    shown = octomem(project, "--data-dir", str(demo), "config", "global_root", **env)
    assert shown.code == 0, shown.err
    assert "--data-dir" in shown.out and str(demo) in shown.out
    # --global-root, the more specific option, still beats --data-dir
    other = tmp_path / "other"
    ran = octomem(project, "--data-dir", str(demo), "--global-root", str(other), "add",
                  "--scope", "global", "Kestrel releases on Tuesdays", **env)
    assert ran.code == 0, ran.err
    assert (other / "octomem.sqlite3").is_file()
    # without --data-dir the environment still decides
    ran = octomem(project, "add", "--scope", "global", "The user writes in British English",
                  **env)
    assert ran.code == 0, ran.err
    assert (real / "octomem.sqlite3").is_file()


def test_a_deeply_nested_line_is_a_line_error() -> None:
    with pytest.raises(LineNotJSON) as caught:
        parse_line('{"text": "ok", "extra": ' + DEEP + '}')
    assert caught.value.why == "arrays or objects nested too deeply to read"
    with pytest.raises(LineNotJSON) as caught:
        parse_line('{"text": "ok",}\n')
    assert caught.value.why == (
        "Expecting property name enclosed in double quotes at column 15")
    assert parse_line('{"a": [[1]]}\n') == {"a": [[1]]}


def test_a_deeply_nested_line_is_named_and_the_rest_of_the_folder_stored(
        tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "notes").mkdir(parents=True)
    (project / "notes" / "chat.jsonl").write_text(
        json.dumps({"speaker": "Ben", "text": "ok"}) + "\n"
        + '{"speaker": "Ana", "text": "fine", "extra": ' + DEEP + '}\n')
    (project / "notes" / "ferry.md").write_text("# Ferry\n\nThe ferry leaves at seven.\n")
    env = {"OCTOMEM_GLOBAL_ROOT": str(tmp_path / "global")}
    ran = octomem(project, "ingest", "notes", ok=False, **env)
    assert ran.code == 1, ran.err  # a file skipped for an error, the rest stored
    assert "RecursionError" not in ran.err
    assert "skipped: notes/chat.jsonl:2: not valid JSON: arrays or objects nested too deeply " \
        "to read" in ran.err
    assert ran.out.startswith("added 1, replaced 0, unchanged 0 documents")
    found = octomem(project, "search", "when does the ferry leave?", "--json", **env).json()
    assert found["hits"][0]["text"].endswith("The ferry leaves at seven.")


def test_a_deeply_nested_beir_record_or_export_line_is_refused_by_file_and_line(
        tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "beir").mkdir(parents=True)
    (project / "beir" / "corpus.jsonl").write_text(
        json.dumps({"_id": "a", "text": "fine"}) + "\n"
        + '{"_id": "b", "text": "x", "metadata": ' + DEEP + '}\n')
    (project / "deep.jsonl").write_text(
        json.dumps({"type": "octomem-export", "format": 1}) + "\n" + '{"x": ' + DEEP + '}\n')
    env = {"OCTOMEM_GLOBAL_ROOT": str(tmp_path / "global")}
    ran = octomem(project, "ingest", "--beir", "beir", ok=False, **env)
    assert ran.code == 1
    assert ran.err.strip().splitlines()[-1] == (
        "error: beir/corpus.jsonl:2: not valid JSON: arrays or objects nested too deeply to "
        "read; nothing of the corpus was stored")  # the corpus is read whole first (trial 16)
    ran = octomem(project, "import", "deep.jsonl", ok=False, **env)
    assert ran.code == 1
    assert ran.err.strip().splitlines()[-1] == (
        "error: deep.jsonl:2: not valid JSON: arrays or objects nested too deeply to read")


def test_the_mcp_ingest_tool_names_the_deeply_nested_line(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    chat = project / "chat.jsonl"
    chat.write_text(json.dumps({"speaker": "Ben", "text": "ok"}) + "\n"
                    + '{"speaker": "Ana", "text": "fine", "extra": ' + DEEP + '}\n')
    with stdio_client(tmp_path, project) as client:
        message = client.error("ingest", path_or_text=str(chat))
        assert f"{chat}:2: not valid JSON: arrays or objects nested too deeply to read" \
            in message, message
        assert client.ok("status")["scopes"]["local"]["documents"] == 0


def claude_record(uuid: str, role: str, content: object, second: int) -> str:
    return json.dumps({
        "type": role, "uuid": uuid, "sessionId": "s-1", "cwd": "/work/billing",
        "timestamp": f"2025-03-04T09:12:{second:02d}.000Z",
        "message": {"role": role, "content": content}})


REMINDER = ("<system-reminder>\nAs you answer the user's questions, you can use the "
            "following context:\n# claudeMd\nContents of /work/billing/CLAUDE.md:\n"
            "- Always run make lint before committing.\n</system-reminder>")


def test_claude_code_injected_blocks_are_not_the_users_words(tmp_path: Path) -> None:
    session = tmp_path / "s-1.jsonl"
    session.write_text("\n".join([
        claude_record("u-1", "user", [{"type": "text", "text": REMINDER},
                                      {"type": "text", "text": "Which queue do invoices use?"}],
                      0),
        claude_record("a-1", "assistant",
                      [{"type": "text", "text": "SQS, the billing-jobs queue."}], 5),
        claude_record("u-2", "user", "Thanks. <system-reminder>The TodoWrite tool hasn't been "
                      "used recently.</system-reminder>\n\nWhat about the PDF size limit?"
                      "\n\n<ide_selection>The user selected lines 1-9 of invoice.py"
                      "</ide_selection>", 9),
        claude_record("a-2", "assistant", "Ten megabytes.", 12),
        claude_record("u-3", "user",
                      "<ide_opened_file>The user opened pdf.py</ide_opened_file>", 20),
        claude_record("u-4", "user",
                      "Is <system-reminder> a tag you see? It stays: never closed.", 25),
    ]) + "\n")
    turns = read_claude_code(session)
    assert [(t.id, t.text) for t in turns] == [
        ("claude:u-1", "user: Which queue do invoices use?"),
        ("claude:a-1", "assistant: SQS, the billing-jobs queue."),
        ("claude:u-2", "user: Thanks. \n\nWhat about the PDF size limit?"),
        ("claude:a-2", "assistant: Ten megabytes."),
        # u-3 held only an IDE note: dropped, so u-4 is the next user turn
        ("claude:u-4", "user: Is <system-reminder> a tag you see? It stays: never closed."),
    ]


def test_an_ingested_session_stores_the_typed_text_alone(memory: Memory, tmp_path: Path) -> None:
    session = tmp_path / "s-1.jsonl"
    session.write_text(claude_record("u-1", "user", REMINDER + "\nWhich queue do invoices use?", 0)
                       + "\n")
    _, first = memory.ingest(str(session), fmt="claude-code")
    assert first.added == ["claude:u-1"]
    assert memory.find("claude:u-1")[0][1].text == "user: Which queue do invoices use?"


def _values(data: object) -> list[object]:
    if isinstance(data, dict):
        return [v for item in data.values() for v in [item, *_values(item)]]
    if isinstance(data, list):
        return [v for item in data for v in [item, *_values(item)]]
    return []


def test_the_text_an_agent_reads_is_compact_and_the_structured_answer_whole(
        tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    chat = project / "chat.jsonl"
    chat.write_text("\n".join(json.dumps(t) for t in [
        {"session": "s1", "speaker": "Ana", "text": "Why did the nightly export crash?",
         "time": "2025-05-01T10:00:00Z"},
        {"session": "s1", "speaker": "Ben", "text": "It built the whole CSV in memory; I made "
         "it stream rows in batches of 10,000.", "time": "2025-05-01T10:01:00Z"},
    ]) + "\n")
    with stdio_client(tmp_path, project) as client:
        client.ok("ingest", path_or_text=str(chat))
        client.ok("remember", text="The nightly export writes to the reports bucket")
        result = client.call("recall", {"query": "what changed in the nightly export?"})
    assert not result.is_error
    whole = result.structured_content
    assert whole is not None and "timings_ms" in whole and "arms_ran" in whole
    assert all("chunk_id" in h and "created_at" in h for h in whole["hits"])
    text = result.content[0].text  # type: ignore[union-attr]
    read = json.loads(text)
    assert text == json.dumps(read, ensure_ascii=False, separators=(",", ":"))  # compact
    assert read["query"] == "what changed in the nightly export?"
    assert [h["id"] for h in read["hits"]] == [h["id"] for h in whole["hits"]]
    assert [h["text"] for h in read["hits"]] == [h["text"] for h in whole["hits"]]
    assert [h["relevance"] for h in read["hits"]] == [h["relevance"] for h in whole["hits"]]
    assert not {"timings_ms", "arms_ran", "scopes"} & read.keys()
    assert None not in _values(read) and [] not in _values(read) and {} not in _values(read)
    for hit in read["hits"]:
        assert not {"chunk_id", "score", "fused_score", "recency_bonus", "created_at"} & hit.keys()
        assert "current" not in hit  # true: the usual value
        if "turn" in hit:
            assert "uri" not in hit and hit["turn"]["speaker"] in ("Ana", "Ben")
            assert "time" not in hit["turn"]  # the hit's event_time says it
    assert any("turn" in h for h in read["hits"]) and any("turn" not in h for h in read["hits"])
    assert len(text) < len(json.dumps(whole, indent=2)) / 2


@needs_git
def test_an_older_store_folder_gets_its_gitignore_once(tmp_path: Path) -> None:
    """Trial 20 L1: a project store an older octomem made (no ``.gitignore``, no
    ``meta.gitignore_written``) gets the file, with a warning, when this octomem first
    opens it; deleted after that, it stays deleted."""
    repo, env = tmp_path / "repo", {"OCTOMEM_GLOBAL_ROOT": str(tmp_path / "global")}
    repo.mkdir()
    git(repo, "init", "-q")
    assert octomem(repo, "add", "Deploys go out on Tuesdays", **env).code == 0
    store = repo / ".octomem"
    (store / ".gitignore").unlink()  # as an older octomem left the folder
    conn = apsw.Connection(str(store / "octomem.sqlite3"))
    conn.execute("DELETE FROM meta WHERE key = 'gitignore_written'")
    conn.close()
    assert git(repo, "status", "--short") == "?? .octomem/\n"
    ran = octomem(repo, "search", "when do deploys go out?", spawn=True, **env)
    assert ran.code == 0, ran.err
    assert "Deploys go out on Tuesdays" in ran.out
    assert "wrote .gitignore" in ran.err and "delete it to commit the memory" in ran.err
    assert (store / ".gitignore").read_text() == STORE_GITIGNORE
    assert git(repo, "status", "--short") == ""
    (store / ".gitignore").unlink()  # shared on purpose now
    again = octomem(repo, "add", "Releases are tagged on Fridays", spawn=True, **env)
    assert again.code == 0, again.err
    assert not (store / ".gitignore").exists() and "wrote .gitignore" not in again.err
