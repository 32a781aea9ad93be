"""The console script ends without the interpreter's teardown, losing nothing: a thread a
command left working finishes first, every line reaches the pipe, the status is kept."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROBE = """
import sys, threading, time
from pathlib import Path
from octomem.engine.cli import entry, main

def run():
    def write_late():
        time.sleep(0.3)
        Path(late).write_text("written after the command returned")
    threading.Thread(target=write_late).start()  # non-daemon, as a snapshot writer
    for n in range(2000):
        print(f"line {n}")
    return int(status)

entry.run = run
late, status = sys.argv[1:3]
import atexit
atexit.register(lambda: Path(late + ".teardown").write_text("ran"))  # before main: skipped
sys.argv = ["octomem", "status"]  # any command: the console script's path to entry.run
main()
"""


def probe(tmp_path: Path, status: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "late.txt"), str(status)],
                          capture_output=True, text=True, timeout=60, check=False)


def test_threads_finish_and_output_is_flushed_before_the_quick_exit(tmp_path: Path) -> None:
    done = probe(tmp_path, 0)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "line 1999" and len(done.stdout.splitlines()) == 2000
    assert (tmp_path / "late.txt").read_text() == "written after the command returned"
    assert not (tmp_path / "late.txt.teardown").exists()  # the process ended before it


def test_the_status_survives_the_quick_exit(tmp_path: Path) -> None:
    assert probe(tmp_path, 3).returncode == 3


def test_an_escaping_error_still_prints_its_traceback_and_fails(tmp_path: Path) -> None:
    code = ("import sys\nfrom octomem.engine.cli import entry, main\n"
            "def run():\n    raise RuntimeError('a bug')\n"
            "entry.run = run\nsys.argv = ['octomem', 'status']\nmain()\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 1
    assert "RuntimeError: a bug" in done.stderr and "Traceback" in done.stderr


def test_a_program_calling_main_in_its_own_process_keeps_its_exit(tmp_path: Path) -> None:
    """The quick exit is the console script's: run in-process (as this test does, inside
    pytest), ``main`` registers nothing that would end the host process."""
    import atexit

    from cli_run import octomem

    from octomem.engine.cli import entry

    assert not entry.owns_the_process()
    before = atexit._ncallbacks()
    assert octomem(tmp_path, "status").code == 0
    assert atexit._ncallbacks() == before


def test_help_into_a_closed_pipe_ends_quietly() -> None:
    """``octomem --help | head -1``: the reader is gone; no traceback, status 141 (128 +
    SIGPIPE, as every command's output into a closed pipe: test_cli_closed_pipe.py)."""
    import os

    read, write = os.pipe()
    os.close(read)  # nobody reads: the first write fails with EPIPE
    code = ("from octomem.engine.cli import main; import sys; "
            "sys.argv = ['octomem', '--help']; main()")
    done = subprocess.run([sys.executable, "-c", code], stdout=write, stderr=subprocess.PIPE,
                          text=True, timeout=60, check=False)
    os.close(write)
    assert done.returncode == 141
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


KEEP_PROBE = """
import json, sys
from pathlib import Path
from octomem.engine.cli import entry, main

real_run = entry.run

def run():
    status = real_run()
    kept = [p for pipelines in entry._kept for p in pipelines]
    Path(report).write_text(json.dumps({
        "status": status, "kept": len(kept),
        "closed": [p.arms.storage._closed for p in kept]}))
    return status

entry.run = run
report, root = sys.argv[1:3]
sys.argv = ["octomem", "--project-root", root, "--global-root", root + "/global",
            "--set", "pipeline.embedder=", "--set", "pipeline.semantic=", *sys.argv[3:]]
main()
"""


def test_a_search_keeps_its_closed_pipelines_until_the_quick_exit(tmp_path: Path) -> None:
    """The console script closes a search's memory (connections closed, so the WAL is
    checkpointed into the file and removed) but leaves freeing its pipelines to the end
    of the process; run in-process, nothing is kept."""
    from cli_run import octomem

    from octomem.engine.cli import entry

    report = tmp_path / "report.json"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", KEEP_PROBE, str(report), str(tmp_path),
                               *args], capture_output=True, text=True, timeout=120,
                              check=False)

    added = run("add", "the heron nests by the river", "--scope", "local")
    assert added.returncode == 0, added.stderr
    done = run("search", "heron")
    assert done.returncode == 0, done.stderr
    assert "river" in done.stdout
    assert json.loads(report.read_text()) == {  # local only: a read creates no global store
        "status": 0, "kept": 1, "closed": [True]}
    assert not list((tmp_path / ".octomem").glob("*-wal"))
    assert octomem(tmp_path, "--global-root", str(tmp_path / "global"),
                   "search", "heron").code == 0
    assert entry._kept == []
