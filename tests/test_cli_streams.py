"""stdout and stderr on one pipe keep whole lines: a search's timing footer (stdout) and
the warning after it (stderr) are two lines, in the order they were said. Every console
write ends its line and is flushed at once (Rich flushes each ``print``), so a line on
one stream never waits in a buffer while the other stream writes.

A trial once read ``... 853 mswarning: ...``: a shell tool that captures the two streams
apart and shows stdout with its last newline stripped, then stderr, glues them so; the
command's own output, on a pipe or at a terminal, has them on two lines (below).

Output written with ``print`` (``--json``) is block-buffered on a pipe: a warning after it
came first, or inside the JSON once 8 KiB of it had gone out, unless ``PYTHONUNBUFFERED``
was set (a user's shell does not set it). A console on stderr now flushes stdout first."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from cli_run import OCTOMEM

WARNING = ("warning: 1 chunk of the local scope has no vector yet (found by their words "
           "only): `octomem reindex` embeds them")


def _run(project: Path, *args: str, merged: bool) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    return subprocess.run(
        [OCTOMEM, "--set", "pipeline.embedder=hashing", *args], cwd=project, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT if merged else subprocess.PIPE,
        env={**env, "COLUMNS": "200"}, timeout=300, check=True)


def test_a_footer_and_a_warning_on_one_pipe_stay_two_lines(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("The billing service uses PostgreSQL 16.\n")
    _run(tmp_path, "--set", "pipeline.semantic=", "ingest", "a.md", merged=False)  # no vectors
    apart = _run(tmp_path, "search", "billing", merged=False)
    assert apart.stdout.endswith("1 hit found by words only (no vector yet)\n"), apart.stdout
    assert apart.stderr == WARNING + "\n"
    for _ in range(3):
        lines = _run(tmp_path, "search", "billing", merged=True).stdout.splitlines()
        footer = [n for n, line in enumerate(lines) if line.startswith("scopes: ")]
        assert len(footer) == 1 and re.fullmatch(
            r"scopes: local · arms: fts5, sqlite-vec · \d+ ms", lines[footer[0]]), lines
        assert lines[footer[0] + 1:] == ["1 hit found by words only (no vector yet)", WARNING]


def warning(chunks: int) -> str:
    """The warning a search prints on stderr when the local scope has chunks without vectors."""
    what = "1 chunk of the local scope has" if chunks == 1 else \
        f"{chunks} chunks of the local scope have"
    return (f"warning: {what} no vector yet (found by their words only): `octomem reindex` "
            "embeds them")


def _merged(project: Path, *args: str) -> list[str]:
    return _run(project, *args, merged=True).stdout.splitlines()


def test_a_warning_follows_the_answer_printed_before_it(tmp_path: Path) -> None:
    long_text = " ".join(f"The billing ledger entry {i} was reconciled." for i in range(400))
    (tmp_path / "a.md").write_text(f"The billing service uses PostgreSQL 16.\n\n{long_text}\n")
    _merged(tmp_path, "--set", "pipeline.semantic=", "ingest", "a.md")  # no vectors
    lines = _merged(tmp_path, "search", "billing", "--json")
    assert len("\n".join(lines)) > 8192  # more than one buffer of JSON
    answer = json.loads("\n".join(lines[:-1]))  # the JSON whole, then the warning
    assert answer["chunks_without_vector"] > 1 and answer["hits"]
    assert lines[-1] == warning(answer["chunks_without_vector"])
    lines = _merged(tmp_path, "search", "billing", "--top-k", "1")
    footer = [n for n, line in enumerate(lines) if line.startswith("scopes: ")]
    assert len(footer) == 1 and re.fullmatch(
        r"scopes: local · arms: fts5, sqlite-vec · \d+ ms", lines[footer[0]]), lines
    assert lines[footer[0] + 1:] == ["1 hit found by words only (no vector yet)",
                                     warning(answer["chunks_without_vector"])]
