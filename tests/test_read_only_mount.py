"""A store on a read-only mount is read (trial 21): SQLite cannot make the ``-wal`` and
``-shm`` files it reads a WAL store through, so the file is opened immutable; search,
status and the MCP server's recall answer, every write is refused in one line, and the
store's files are left byte for byte as they were.

The mount is real: each run bind-mounts the store's folder onto itself read-only in a
mount namespace of its own (``unshare -m``, as root; ``unshare -rm`` otherwise), so
nothing outside the process sees it and nothing is left mounted."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import apsw
import pytest
from cli_run import OCTOMEM, octomem
from mcp import Client, StdioServerParameters
from mcp_stdio import server_args, server_env

pytestmark = [pytest.mark.slow, pytest.mark.anyio]

#: Mount ``$0`` onto itself read-only, check that a file cannot be made in it (the test
#: exercises a read-only mount, or says it could not), then run the command.
MOUNT = ('mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" '
         '&& ! touch "$0/probe" 2>/dev/null && exec "$@"')
FACTS = ("Upload parts are 8 MiB each", "The kiwi ripens in a paper bag")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def read_only(folder: Path, *command: str) -> list[str]:
    """``command`` run with ``folder`` on a read-only mount of its own; skips the test when
    this machine lets no process make one."""
    if shutil.which("unshare") is None:
        pytest.skip("no unshare(1): cannot make a read-only mount")
    unshare = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-rm"]
    probe = subprocess.run([*unshare, "sh", "-c", MOUNT, str(folder), "true"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot make a read-only mount here ({' '.join(unshare)}: "
                    f"{probe.stderr.strip()[:200]})")
    return [*unshare, "sh", "-c", MOUNT, str(folder), *command]


def _files(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


def _store(project: Path) -> Path:
    for fact in FACTS:
        octomem(project, "add", fact)
    octomem(project, "status")  # closed cleanly: no -wal/-shm left beside the file
    folder = project / ".octomem"
    assert not list(folder.glob("*-wal")) and not list(folder.glob("*-shm"))
    return folder


def test_cli_reads_a_store_on_a_read_only_mount(project: Path) -> None:
    folder = _store(project)
    before = _files(folder)
    env = {**os.environ, "COLUMNS": "200"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        argv = read_only(folder, OCTOMEM, "--set", "pipeline.embedder=hashing", *args)
        return subprocess.run(argv, cwd=project, capture_output=True, text=True, env=env,
                              timeout=300)

    found = run("search", "how big are the upload parts", "--json")
    assert found.returncode == 0, found.stderr
    assert "upload parts" not in found.stderr and "Traceback" not in found.stderr
    assert '"Upload parts are 8 MiB each"' in found.stdout, found.stdout[:2000]
    assert "not searched" not in found.stdout + found.stderr
    status = run("status")
    assert status.returncode == 0 and "2 (2 current" in status.stdout, status
    added = run("add", "Deploys run on Fridays")
    assert added.returncode == 1
    assert added.stderr.strip().splitlines()[-1] == (
        f"error: {folder / 'octomem.sqlite3'} is read-only: nothing was written; make it "
        "writable for this user (chmod u+w; chattr -i if it is immutable; a read-only mount) "
        "to store anything"), added.stderr
    assert _files(folder) == before  # no -wal, -shm or snapshot made; the file unchanged


async def test_mcp_recall_answers_from_a_read_only_mount(tmp_path: Path, project: Path) -> None:
    folder = _store(project)
    before = _files(folder)
    log = tmp_path / "server.log"  # the server's stderr, at level INFO
    argv = read_only(folder, "sh", "-c", 'exec "$@" 2>"$0"', str(log), sys.executable,
                     *server_args(project)[:-2], "--log-level", "INFO")
    params = StdioServerParameters(command=argv[0], args=argv[1:],
                                   env=server_env(tmp_path))
    async with Client(params, read_timeout_seconds=120) as client:
        recalled = await client.call_tool("recall", {"query": "kiwi paper bag"})
        assert not recalled.is_error, recalled.content
        hits = recalled.structured_content["hits"]
        assert [h["text"] for h in hits][:1] == ["The kiwi ripens in a paper bag"]
        assert recalled.structured_content.get("scopes_unavailable") in (None, [], {})
        refused = await client.call_tool("remember", {"text": "Deploys run on Fridays"})
        assert refused.is_error
        assert "is read-only: nothing was written" in refused.content[0].text
        status = await client.call_tool("status", {})
        assert not status.is_error, status.content
    assert _files(folder) == before
    logged = log.read_text()  # no snapshot of the in-RAM copies is even tried
    assert "recall ok" in logged and "snapshot" not in logged, logged


def test_a_log_holding_writes_is_not_read_past(tmp_path: Path, project: Path) -> None:
    """A ``-wal`` that still holds writes (a store copied while open) is read only through
    its ``-shm``, which a read-only mount cannot make: opened immutable, the store would
    answer without them, so it is refused as before, naming the folder."""
    folder = _store(project)
    copy = tmp_path / "copy"
    (copy / ".octomem").mkdir(parents=True)
    store = folder / "octomem.sqlite3"
    conn = apsw.Connection(str(store))
    conn.execute("PRAGMA wal_autocheckpoint=0").fetchall()
    conn.execute("CREATE TABLE written_last(a)")
    for name in ("octomem.sqlite3", "octomem.sqlite3-wal"):
        shutil.copy(folder / name, copy / ".octomem" / name)
    conn.close()
    assert (copy / ".octomem" / "octomem.sqlite3-wal").stat().st_size > 0
    argv = read_only(copy / ".octomem", OCTOMEM, "--set", "pipeline.embedder=hashing",
                     "search", "kiwi paper bag")
    ran = subprocess.run(argv, cwd=copy, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "COLUMNS": "400"})
    assert ran.returncode == 0 and "ripens" not in ran.stdout, ran
    assert (f"local scope not searched: cannot open the store {copy / '.octomem'}/"
            "octomem.sqlite3 (") in ran.stdout + ran.stderr, ran
