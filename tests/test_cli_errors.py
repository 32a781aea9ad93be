"""What a user sees when a command goes wrong: click's usage message or one error line."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from octomem.engine.errors import InvalidQueryError
from octomem.engine.memory.ingest import ingest_documents

OCTOMEM = [sys.executable, "-c", "from octomem.engine.cli import main; main()"]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*OCTOMEM, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("search", "foo", "bar"), "unexpected extra argument"),
        (("search",), "error: missing argument 'QUERY'"),
        (("search", "foo", "-k", "0"), "--top-k: must be at least 1, got 0"),
        (("nosuchcommand",), "error: no such command"),
    ],
)
def test_usage_errors_are_a_message_not_a_traceback(args: tuple[str, ...], says: str,
                                                     tmp_path: Path) -> None:
    result = run(*args, cwd=tmp_path)
    assert result.returncode == 2
    assert says in result.stderr
    assert "Traceback" not in result.stderr



@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("search", "x", "--as-of", "garbage"),
         "error: --as-of: 'garbage' is not an ISO-8601 date or time; use e.g. 2025-03-01 or "
         "2025-03-01T14:30:00Z; see `octomem search --help`"),
        (("recall", "x", "--max-tokens", "-5"),
         "error: --max-tokens: must be at least 16, got -5; see `octomem recall --help`"),
        (("search", "x", "--per", "page"),
         "error: --per: must be 'chunk' or 'document', got 'page'; see `octomem search --help`"),
        (("search", "x", "--since", "2025-01-01", "--until", "2024-01-01"),
         "error: --until: '2024-01-01' ends before since ('2025-01-01') starts: no time is in "
         "both; see `octomem search --help`"),
        (("--debug", "recall", "x", "--scope", "team"),
         None),
    ],
)
def test_a_value_the_engine_refuses_is_a_usage_error(args: tuple[str, ...], says: str | None,
                                                     tmp_path: Path) -> None:
    """Options checked by the engine, not by click, end as click's usage errors do: one
    line naming the option and the command's --help, status 2 (--debug: the traceback)."""
    from cli_run import octomem

    octomem(tmp_path, "add", "We build the frontend with Vite")
    ran = octomem(tmp_path, *args, ok=False) if says else None
    if ran is not None:
        assert (ran.code, ran.err.strip(), ran.out) == (2, says, "")
    else:
        with pytest.raises(InvalidQueryError, match="^scope: must be 'local' or 'global'"):
            octomem(tmp_path, *args, ok=False)
    assert "We build the frontend" in octomem(tmp_path, "search", "frontend Vite").out


@pytest.mark.slow
def test_file_system_errors_are_one_line(tmp_path: Path) -> None:
    result = run("import", str(tmp_path / "missing.jsonl"), cwd=tmp_path)
    assert result.returncode == 1
    missing = tmp_path / "missing.jsonl"
    assert result.stderr.strip() == f"error: {missing}: No such file or directory"
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    result = run("--data-dir", str(blocker), "--set", "pipeline.embedder=hashing", "add",
                 "--scope", "global", "x", cwd=tmp_path)  # status creates no scope now
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_importing_a_file_that_is_not_an_export_is_one_line(tmp_path: Path) -> None:
    binary, empty = tmp_path / "bad.md", tmp_path / "empty.jsonl"
    binary.write_bytes(b"\xff\xfe bad \x80 bytes\n")
    empty.write_text("")
    result = run("import", str(binary), cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr == f"error: {binary}:1: not UTF-8 text (invalid start byte)\n"
    result = run("import", str(empty), cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr == f"error: {empty}: empty; not an octomem JSONL export (format 1 or 2)\n"


@pytest.mark.slow
def test_one_bad_file_is_skipped_not_fatal(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "good.md").write_text("# Deploy\nThe staging server is called kestrel.\n")
    (notes / "empty.md").write_text("")
    (notes / "binary.md").write_bytes(b"\xff\xfe\x00bad")
    result = run("--data-dir", str(tmp_path / "data"), "--set", "pipeline.embedder=hashing",
                 "ingest", "--scope", "global", str(notes), cwd=tmp_path)
    assert result.returncode == 1, result.stderr  # a file was skipped for an error
    assert "skipped:" in result.stderr and "empty file" in result.stderr
    assert "not UTF-8" in result.stderr and "added 1" in result.stdout


def test_a_mistyped_path_is_not_stored_as_a_memory(tmp_path: Path) -> None:
    for value in ("/nonexistent/file.md", "./notes/x", "readme.md"):
        with pytest.raises(InvalidQueryError, match="looks like a file path"):
            ingest_documents(value, tmp_path)
    docs = ingest_documents("remember that the build uses make", tmp_path)
    assert [d.text for d in docs] == ["remember that the build uses make"]


@pytest.mark.slow
def test_top_k_ceiling_is_the_limits_setting(tmp_path: Path) -> None:
    """`--top-k` is bounded by `limits.top_k` (a setting), not by a number of the CLI's own."""
    common = ("--data-dir", str(tmp_path / "data"), "--set", "pipeline.embedder=hashing")
    refused = run(*common, "search", "anything", "-k", "5000", cwd=tmp_path)
    assert refused.returncode == 2  # a bad option value: a usage error
    assert refused.stderr == ("error: --top-k: 5,000 is more than limits.top_k (1,000); "
                              "see `octomem search --help`\n")
    allowed = run(*common, "--set", "limits.top_k=2000", "search", "anything", "-k", "1500",
                  "--json", cwd=tmp_path)
    assert allowed.returncode == 0, allowed.stderr


def test_collapsed_repetitions_are_counted_and_listed_under_explain(tmp_path: Path) -> None:
    """A repetition dedup collapsed is one dim count line under the answer; --explain
    lists each (removed, kept, why); one whose kept hit is not shown is not mentioned."""
    from cli_run import octomem

    text = "Restart the worker with systemctl restart worker"
    octomem(tmp_path, "add", text)
    octomem(tmp_path, "add", "--scope", "global", text)
    plain = octomem(tmp_path, "search", "restart the worker").out.splitlines()
    assert plain[-1] == "1 repetition of these hits collapsed (--explain lists them)"
    assert not any(line.startswith("collapsed ") for line in plain)
    explained = octomem(tmp_path, "search", "restart the worker", "--explain").out.splitlines()
    listed = [line for line in explained if line.startswith("collapsed ")]
    assert len(listed) == 1
    assert re.fullmatch(r"collapsed \w+ \((local|global)\) into \w+ \((local|global)\): "
                        r"identical text", listed[0])
    assert not any("repetition" in line for line in explained)
    unrelated = octomem(tmp_path, "search", "zebra crossing", "-k", "1").out
    assert "collapsed" not in unrelated
