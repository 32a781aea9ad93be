"""Trial 13 M12: a path named to ``ingest`` that cannot be read is named, the others stored.

Before, one unreadable named path (a file or folder without read permission) stopped the
whole command with status 2 (``invalid value for 'PATHS': path 'b.md' is not
readable``), or a traceback-free ``locked/.git: Permission denied``, and nothing of the
other paths was stored. Now each is skipped and named (``PATH: cannot be read
(Permission denied)``), the rest is stored, and the command ends with status 1, as a
folder inside a named one that cannot be listed already did (trial 12 F15).

The permissions are real: as root (which reads everything) the commands run under
``setpriv`` without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, so the kernel refuses them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import OCTOMEM
from mcp_stdio import server_env

DROP = "-dac_override,-dac_read_search"


def _unprivileged() -> list[str]:
    """The command prefix that makes permission bits count (none for a normal user)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: permissions cannot be enforced")
    return [setpriv, f"--inh-caps={DROP}", f"--bounding-set={DROP}"]


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    (project / "notes").mkdir(parents=True)
    (project / "a.md").write_text("# Alpha\nThe kestrel nests on the tower.\n")
    (project / "notes" / "c.md").write_text("# Delta\nDeploys happen on Tuesdays.\n")
    (project / "b.md").write_text("# Secret\nThe puffin count is secret.\n")
    (project / "chat.jsonl").write_text(
        json.dumps({"conversation": "c", "speaker": "Ana", "text": "the owl is awake"}) + "\n")
    (project / "locked").mkdir()
    (project / "locked" / "x.md").write_text("# Locked\nThe heron is hidden.\n")
    for path in ("b.md", "chat.jsonl", "locked"):
        (project / path).chmod(0)
    return project


def _run(project: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**server_env(tmp_path), "COLUMNS": "200"}
    return subprocess.run([*_unprivileged(), OCTOMEM, *args], cwd=project, env=env,
                          capture_output=True, text=True, timeout=300)


def test_an_unreadable_named_path_is_named_and_the_others_stored(tmp_path: Path) -> None:
    project = _project(tmp_path)
    ran = _run(project, tmp_path, "ingest", "a.md", "b.md", "chat.jsonl", "locked", "notes")
    assert ran.returncode == 1, (ran.stdout, ran.stderr)
    assert "Traceback" not in ran.stderr and "invalid value" not in ran.stderr, ran.stderr
    assert "added 2" in ran.stdout, ran.stdout
    for named in ("b.md: cannot be read (Permission denied)",
                  "chat.jsonl: cannot be read (Permission denied)",
                  "locked/: cannot be read (Permission denied)"):
        assert named in ran.stderr, ran.stderr
    assert "no text file" not in ran.stderr, ran.stderr  # the locked folder: said once
    found = _run(project, tmp_path, "search", "when do deploys happen", "--json")
    titles = [hit["title"] for hit in json.loads(found.stdout)["hits"]]
    assert "Delta" in titles and "Secret" not in titles and "Locked" not in titles, titles
    alone = _run(project, tmp_path, "ingest", "locked")
    assert alone.returncode == 1 and alone.stderr.startswith(
        "error: locked/: cannot be read (Permission denied)"), alone.stderr


def test_the_mcp_ingest_of_an_unreadable_path_is_one_clear_error(tmp_path: Path) -> None:
    from anyio.from_thread import start_blocking_portal
    from mcp import Client, StdioServerParameters

    project = _project(tmp_path)
    prefix = _unprivileged()
    command, args = (prefix[0], [*prefix[1:], sys.executable]) if prefix else (sys.executable, [])
    params = StdioServerParameters(
        command=command, args=[*args, "-m", "octomem.mcp_server", "--project-root",
                               str(project), "--log-level", "WARNING"],
        env=server_env(tmp_path))
    with start_blocking_portal() as portal, \
            portal.wrap_async_context_manager(Client(params, read_timeout_seconds=60)) as client:
        for path, said in (("locked", "locked/: cannot be read (Permission denied)"),
                           ("b.md", "b.md: cannot be read (Permission denied)")):
            result = portal.call(client.call_tool, "ingest", {"path_or_text": path})
            assert result.is_error, result.structured_content
            text = result.content[0].text
            assert said in text and "internal" not in text.lower(), text
