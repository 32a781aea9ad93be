"""Memory stays private and local (issue 13, items 2 and 3): files 0600 in 0700 folders
that octomem creates, an existing wider folder left alone and reported by ``status``,
and onnxruntime's telemetry off before onnxruntime is imported."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import octomem
from mcp_stdio import stdio_client

pytestmark = pytest.mark.slow


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_octomem_creates_private_folders_and_files(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir(mode=0o755)
    global_root = tmp_path / "nested" / "global"
    old = os.umask(0o022)
    try:
        octomem(project, "--global-root", str(global_root), "add", "The user likes tea",
                "--scope", "global")
        octomem(project, "--global-root", str(global_root), "add", "The repo uses uv")
        export = project / "memory.jsonl"
        octomem(project, "--global-root", str(global_root), "export", str(export))
    finally:
        os.umask(old)
    for folder in (project / ".octomem", global_root, global_root.parent):
        assert _mode(folder) == 0o700, folder
    stores = list((project / ".octomem").iterdir()) + list(global_root.iterdir())
    assert any(p.name.endswith("-wal") for p in stores) or stores
    for file in [*stores, export]:
        assert _mode(file) == 0o600, (file, oct(_mode(file)))
    assert _mode(project) == 0o755  # not octomem's


def test_an_existing_wider_folder_is_left_alone_and_status_says_so(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".octomem").mkdir(parents=True)
    os.chmod(project / ".octomem", 0o755)
    octomem(project, "add", "The repo uses uv")
    assert _mode(project / ".octomem") == 0o755
    shown = octomem(project, "status")
    assert "0755" in shown.out and str(project / ".octomem") in shown.out
    with stdio_client(tmp_path, project) as mcp:
        local = mcp.ok("status")["scopes"]["local"]
        assert "0755" in local["permissions_warning"]


def test_onnxruntime_telemetry_is_off_and_queues_nothing(tmp_path: Path) -> None:
    """Loading the default embedder and embedding queues no telemetry event: onnxruntime
    (1.32 on Linux) writes its 1DS queue to ~/.cache/Microsoft/DeveloperTools/.onnxruntime/
    as soon as it is imported unless ORT_DISABLE_TELEMETRY is set before that."""
    home = tmp_path / "home"
    home.mkdir()
    script = (
        "import os, pathlib\n"
        "from octomem.engine.memory.facade import open_memory\n"
        "memory = open_memory(project_root=pathlib.Path.cwd())\n"
        "out = memory.remember('telemetry must stay off')\n"
        "assert out.embedded, out.semantic_error\n"
        "import onnxruntime\n"
        "print(os.environ.get('ORT_DISABLE_TELEMETRY'))\n"
    )
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"]}
    env.pop("ORT_DISABLE_TELEMETRY", None)
    done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "1"
    queued = [p for p in home.rglob("*") if "onnxruntime" in p.name.lower()
              or p.name == "DeveloperTools"]
    assert queued == []
