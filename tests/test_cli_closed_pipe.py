"""Trial 13 M11: ``octomem search x | head -1`` and ``octomem export - | head -1`` ended with
status 1 and no word (click's and Rich's answer to a closed pipe), so a script under
``set -o pipefail`` saw a failure it could not explain. Now the command ends quietly
with 141 (128 + SIGPIPE), what a shell reports for ``yes | head -1``.

The reader is gone before the command writes (the pipe's read end is closed at once), so
every run meets the closed pipe, whatever the output's size."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cli_run import OCTOMEM, octomem

from octomem.engine.cli.layout import PIPE_CLOSED_STATUS


def _into_closed_pipe(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    read, write = os.pipe()
    os.close(read)  # the reader went away (head -1 has its line)
    try:
        return subprocess.run([OCTOMEM, "--set", "pipeline.embedder=hashing", *args],
                              cwd=project, stdout=write, stderr=subprocess.PIPE, text=True,
                              timeout=300, check=False)
    finally:
        os.close(write)


@pytest.mark.parametrize("args", [
    ("search", "colour", "-k", "50"),  # the plain search's own path (no typer)
    ("search", "colour", "--json"),
    ("search", "colour", "--explain"),
    ("export", "-"),
    ("export", "--format", "md", "-"),
    ("status",),
])
def test_a_closed_pipe_ends_quietly_with_141(tmp_path: Path, args: tuple[str, ...]) -> None:
    octomem(tmp_path, "add", "The colour of the door is green")
    octomem(tmp_path, "add", "The colour of the gate is blue")
    done = _into_closed_pipe(tmp_path, *args)
    assert PIPE_CLOSED_STATUS == 141
    assert (done.returncode, done.stderr) == (141, ""), done
    assert len(octomem(tmp_path, "export", "-").out.splitlines()) >= 3  # nothing lost
