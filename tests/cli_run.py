"""The installed ``octomem`` console script, run as a user runs it (a subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

OCTOMEM = str(Path(sys.executable).with_name("octomem"))


@dataclass
class Ran:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def octomem(project: Path, *args: str, ok: bool = True, hashing: bool = True,
            **env: str) -> Ran:
    """Run ``octomem ARGS`` in ``project`` (the test's isolated HOME and data dir)."""
    base = ["--set", "pipeline.embedder=hashing"] if hashing else []
    done = subprocess.run([OCTOMEM, *base, *args], cwd=project, capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "200", **env}, timeout=300)
    ran = Ran(done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    if ok:
        assert done.returncode == 0, (done.stdout[-2000:], done.stderr[-2000:])
    return ran
