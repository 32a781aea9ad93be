"""``--help`` reads naturally at 80 columns: flags without a type, values by name, and each
command's ``--scope`` saying what it does for that command."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from octomem.engine.cli import app

COMMANDS = ["ingest", "add", "search", "forget", "reindex", "plugins", "status", "config",
            "verify", "metrics", "session-start", "serve", "export", "import", "bench",
            "log tail"]


def help_text(*args: str) -> str:
    result = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": "80"},
                                prog_name="octomem")
    assert result.exit_code == 0, result.output
    return result.output


def option_help(text: str, option: str) -> str:
    """Return the help of ``option`` in a rich help panel (its row and continuations)."""
    rows = [line.strip("│ ") for line in text.splitlines()]
    start = next(i for i, row in enumerate(rows) if row.startswith(option + " "))
    end = next((i for i in range(start + 1, len(rows)) if rows[i].startswith("-")), len(rows))
    return " ".join(rows[start:end])


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_flags_read_as_flags_and_lines_fit_80_columns(command: str | None) -> None:
    text = help_text(*(command.split() if command else []))
    assert not re.search(r"<(bool|str|int|list|path|Path)", text)  # no Python types shown
    assert "--no-" not in text  # a flag is one word: --explain, not --explain/--no-explain
    assert re.search(r"--help\s+Show this message", text)  # no type between flag and help
    assert max(len(line) for line in text.splitlines()) <= 80


def test_search_options_name_their_values() -> None:
    text = help_text("search")
    assert re.search(r"--json\s+Print the answer as JSON", text)
    assert re.search(r"--explain\s+Add each arm's", text)
    assert re.search(r"--kind\s+KIND\s", text) and re.search(r"--since\s+DATE\s", text)
    assert re.search(r"-k\s+N\s+Number of hits, at least 1", text)  # no [x>=1]
    assert "x>=" not in text


def test_each_scope_option_is_written_for_its_own_command() -> None:
    said = {c: option_help(help_text(c), "--scope")
            for c in ("ingest", "add", "search", "forget", "reindex", "export")}
    assert "Search only" in said["search"]
    assert "Embed only" in said["reindex"] and "search" not in said["reindex"].lower()
    assert "Look only" in said["forget"]
    assert "Where to store" in said["ingest"] and "Where to store" in said["add"]
    assert "export" in said["export"]


def usage_line(text: str) -> str:
    return next(line.strip() for line in text.splitlines() if "Usage:" in line)


def test_usage_lines_name_arguments_as_click_does() -> None:
    assert usage_line(help_text("search")) == "Usage: octomem search [OPTIONS] QUERY"
    assert usage_line(help_text("ingest")) == "Usage: octomem ingest [OPTIONS] [PATHS]..."
    assert usage_line(help_text("forget")) == "Usage: octomem forget [OPTIONS] ID_OR_TEXT"
    assert usage_line(help_text()) == "Usage: octomem [OPTIONS] COMMAND [ARGS]..."
    for command in COMMANDS:
        assert "{" not in usage_line(help_text(*command.split())), command
