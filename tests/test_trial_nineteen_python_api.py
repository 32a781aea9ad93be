"""Trial 19 K6: using octomem from Python was documented nowhere (``open_memory`` had to be
found by reading the code). docs/python.md's example runs as written, in a fresh process,
and answers what ``octomem search --json`` answers."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from served import OCTOMEM_SERVE, server_env

DOC = Path(__file__).resolve().parents[1] / "docs" / "python.md"
OCTOMEM = OCTOMEM_SERVE[0]


def test_the_documented_example_runs_and_agrees_with_the_cli(tmp_path: Path) -> None:
    example = re.search(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert example is not None
    project = tmp_path / "project"
    project.mkdir()
    env = server_env(tmp_path)
    ran = subprocess.run([sys.executable, "-c", example.group(1)], cwd=project, env=env,
                         capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    printed = ran.stdout.splitlines()
    stored_id, hits, abstained = printed[0], printed[1:-1], printed[-1]
    assert abstained == "None" and len(hits) == 1
    hit_id, relevance, band, text = hits[0].split(" ", 3)
    assert (hit_id, text) == (stored_id, "The user prefers tabs over spaces")
    assert (project / ".octomem").is_dir()  # the local scope of project_root "."
    cli = subprocess.run([OCTOMEM, "search", "tabs or spaces?", "--kind", "PREFERENCE",
                          "--json"], cwd=project, env=env, capture_output=True, text=True,
                         timeout=300)
    assert cli.returncode == 0, cli.stderr
    answer = json.loads(cli.stdout)
    assert [(h["id"], h["relevance"], h["band"]) for h in answer["hits"]] == [
        (hit_id, float(relevance), band)]
