"""stdout and stderr on one pipe keep whole lines: a search's timing footer (stdout) and
the warning after it (stderr) are two lines, in the order they were said. Every console
write ends its line and is flushed at once (Rich flushes each ``print``), so a line on
one stream never waits in a buffer while the other stream writes.

A trial once read ``... 853 mswarning: ...``: a shell tool that captures the two streams
apart and shows stdout with its last newline stripped, then stderr, glues them so; the
command's own output, on a pipe or at a terminal, has them on two lines (below)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from cli_run import OCTOMEM

WARNING = ("warning: 1 chunk of the local scope has no vector yet (found by their words "
           "only): `octomem reindex` embeds them")


def _run(project: Path, *args: str, merged: bool) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [OCTOMEM, "--set", "pipeline.embedder=hashing", *args], cwd=project, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT if merged else subprocess.PIPE,
        env={**os.environ, "COLUMNS": "200"}, timeout=300, check=True)


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
            r"scopes: local, global · arms: fts5, sqlite-vec · \d+ ms", lines[footer[0]]), lines
        assert lines[footer[0] + 1:] == ["1 hit found by words only (no vector yet)", WARNING]
