"""Trial 13 M16: processes starting together on a fresh machine each rebuilt the cached
model (three of them 48 s each, one alone 13.5 s), saying nothing. Now one builds while
the others wait for its lock and use what it built, and each says once on stderr what it
is doing (:mod:`octomem.plugins.fastembed.build_lock`).

Real processes, the real bundled model: a first ``add`` builds the cache in one folder
and says so; a second, started on an empty cache while this test holds the build lock,
says it waits, does not finish, and once the files are there and the lock released it
uses them without building."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import time
from contextlib import ExitStack
from pathlib import Path

import pytest
from cli_run import OCTOMEM

from octomem.plugins.fastembed.build_lock import PREPARING, WAITING

pytestmark = pytest.mark.slow


def _add(project: Path, cache: Path, text: str, stderr: object) -> subprocess.Popen[bytes]:
    project.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "COLUMNS": "200"}
    return subprocess.Popen([OCTOMEM, "add", text], cwd=project, env=env,
                            stdout=subprocess.DEVNULL, stderr=stderr)


def test_one_process_builds_the_model_the_other_waits_for_it(tmp_path: Path) -> None:
    first_cache, second_cache = tmp_path / "cache1", tmp_path / "cache2"
    built = _add(tmp_path / "p1", first_cache, "The heron nests by the river",
                 subprocess.PIPE)
    _, err = built.communicate(timeout=600)
    assert built.returncode == 0, err
    assert PREPARING.split(" (")[0] in err.decode(), err  # said once, on stderr
    models = first_cache / "octomem" / "models"
    files = sorted(p.name for p in models.glob("*.onnx"))
    assert files, list(models.iterdir())
    target = second_cache / "octomem" / "models"
    target.mkdir(parents=True)
    log = tmp_path / "second.err"
    with ExitStack() as held, log.open("wb") as err_file:
        for name in files:  # as another process building them would hold it
            handle = held.enter_context((target / f"{name}.lock").open("a"))
            fcntl.flock(handle, fcntl.LOCK_EX)
        waiting = _add(tmp_path / "p2", second_cache, "The kestrel hovers over the field",
                       err_file)
        deadline = time.monotonic() + 300
        while WAITING not in log.read_text() and time.monotonic() < deadline:
            assert waiting.poll() is None, log.read_text()
            time.sleep(0.2)
        assert WAITING in log.read_text()
        time.sleep(1.0)
        assert waiting.poll() is None  # still waiting for the lock
        for name in files:  # what the other process built
            shutil.copy2(models / name, target / name)
    assert waiting.wait(timeout=300) == 0, log.read_text()
    said = log.read_text()
    assert said.count(WAITING) == 1 and PREPARING.split(" (")[0] not in said, said
    assert sorted(p.name for p in target.glob("*.onnx")) == files
