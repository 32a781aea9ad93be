"""Another process holds the store's write lock (trial 7, #3): a write waits up to the busy
timeout, then either lands (and survives) or fails with one line naming the file; it is
never reported stored without being kept. The holder is a second process using the
Python standard library's own SQLite, as a user's script or a DB browser would."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

from cli_run import octomem

# Holds ``BEGIN EXCLUSIVE`` on the file (argv[1]) for argv[2] seconds, then commits.
HOLDER = textwrap.dedent('''
    import sqlite3, sys, time
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("BEGIN EXCLUSIVE")
    print("locked", flush=True)
    time.sleep(float(sys.argv[2]))
    conn.execute("COMMIT")
    print(f"committed {time.monotonic()}", flush=True)  # the clock every process shares
    conn.close()
''')


def _hold(store: Path, seconds: float) -> subprocess.Popen[str]:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(store), str(seconds)],
                              stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    return holder


def _exported(project: Path) -> str:
    return octomem(project, "export", "-").out


def test_a_write_past_the_busy_timeout_fails_in_one_line_and_stores_nothing(
        tmp_path: Path) -> None:
    octomem(tmp_path, "add", "The store exists before the lock")
    store = tmp_path / ".octomem" / "octomem.sqlite3"
    holder = _hold(store, 30)
    try:
        start = time.monotonic()
        ran = octomem(tmp_path, "--set", "arms.sqlite.busy_timeout_ms=400", "add",
                      "Written while another process holds the lock", ok=False)
        waited = time.monotonic() - start
    finally:
        holder.kill()
        holder.wait()
    assert ran.code == 1
    assert "stored" not in ran.out
    lines = ran.err.strip().splitlines()
    assert len(lines) == 1, ran.err
    assert str(store) in lines[0]
    assert "another process held its write lock for 0.4 s" in lines[0]
    assert "arms.sqlite.busy_timeout_ms" in lines[0] and "nothing was written" in lines[0]
    assert "could not be built" not in lines[0] and "BusyError" not in lines[0]
    assert waited >= 0.4
    exported = _exported(tmp_path)
    assert "The store exists before the lock" in exported
    assert "Written while another process holds the lock" not in exported


def test_a_write_that_outlasts_the_lock_is_stored_and_kept(tmp_path: Path) -> None:
    octomem(tmp_path, "add", "The store exists before the lock")
    store = tmp_path / ".octomem" / "octomem.sqlite3"
    holder = _hold(store, 1.5)
    try:
        ran = octomem(tmp_path, "--set", "arms.sqlite.busy_timeout_ms=20000", "add",
                      "Written once the other process let go")
        returned_at = time.monotonic()
        assert holder.stdout is not None
        said = holder.stdout.readline().split()
        # it waited for the holder to commit (measured from when this process read
        # "locked", a test slowed by a loaded machine saw less than the 1.5 s held)
        assert said[0] == "committed" and returned_at > float(said[1])
    finally:
        holder.kill()
        holder.wait()
    assert ran.out.startswith("stored ")
    doc_id = ran.out.split()[1]
    assert "Written once the other process let go" in _exported(tmp_path)
    # a new process sees it: the write is in the file, not only in this process's RAM
    again = octomem(tmp_path, "add", "Written once the other process let go", spawn=True)
    assert again.out.startswith(f"already stored: {doc_id}")
