"""The ``octomem`` command as a user runs it: its console entry point in this process
(fast), or the installed console script in a subprocess (``spawn=True``)."""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from octomem.engine.cli import main

# The CLI's consoles are module objects: Rich fixes a console's width when COLUMNS is set
# as it is built, and reads COLUMNS on every print otherwise. Build them here, without
# COLUMNS, so each in-process run below gets the width its own COLUMNS says (a test file
# run alone would otherwise keep the first run's width for all).
_columns = os.environ.pop("COLUMNS", None)
import octomem.engine.cli.commands  # noqa: E402, F401

if _columns is not None:
    os.environ["COLUMNS"] = _columns

OCTOMEM = str(Path(sys.executable).with_name("octomem"))

#: Python source that runs ``octomem ARGS`` (``sys.argv[1]``: the arguments as a JSON list) in
#: the interpreter it is given to, then prints to stderr, as JSON, the exit status and every
#: module the process imported: what a fresh command loads.
IMPORT_PROBE = """
import json, sys
sys.argv = ["octomem", *json.loads(sys.argv[1])]
from octomem.engine.cli import main
try:
    main()
except SystemExit as exc:
    code = exc.code
else:
    code = 0
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


@dataclass
class Ran:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def _in_process(project: Path, argv: list[str], env: dict[str, str]) -> Ran:
    out, err = io.StringIO(), io.StringIO()
    saved_env, saved_argv, saved_cwd = dict(os.environ), sys.argv, os.getcwd()
    root = logging.getLogger()  # a run that set logging up (serve) ends with its process:
    saved_logging = root.handlers[:], root.level  # restored, as the next process starts
    os.environ.update({"COLUMNS": "200", **env})
    sys.argv = ["octomem", *argv]
    os.chdir(project)
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    finally:
        root.handlers[:] = saved_logging[0]
        root.setLevel(saved_logging[1])
        os.chdir(saved_cwd)
        sys.argv = saved_argv
        os.environ.clear()
        os.environ.update(saved_env)
    return Ran(code, out.getvalue(), err.getvalue())


def octomem(project: Path, *args: str, ok: bool = True, hashing: bool = True,
            spawn: bool = False, **env: str) -> Ran:
    """Run ``octomem ARGS`` in ``project`` (the test's isolated HOME and data dir).

    :param hashing: use the model-free hashing embedder.
    :param spawn: run the installed console script in a subprocess.
    :param ok: assert exit status 0.
    """
    argv = [*(["--set", "pipeline.embedder=hashing"] if hashing else []), *args]
    if spawn:
        done = subprocess.run([OCTOMEM, *argv], cwd=project, capture_output=True, text=True,
                              env={**os.environ, "COLUMNS": "200", **env}, timeout=300)
        ran = Ran(done.returncode, done.stdout, done.stderr)
    else:
        ran = _in_process(project, argv, env)
    assert "Traceback" not in ran.err, ran.err[-3000:]
    if ok:
        assert ran.code == 0, (ran.out[-2000:], ran.err[-2000:])
    return ran
