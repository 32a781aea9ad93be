"""``octomem --help`` starts light: the modules a fresh process holds after printing help.

Measured by import set, not wall time (the machine's load would make a time flaky): help
loads typer and rich only; the engine (pydantic settings, the pipeline, the plugins) and the
numeric libraries (numpy, onnxruntime, ranx) load when a command runs.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: Modules ``--help`` must not import (each costs 50-500 ms of a fresh process's start).
#: pydantic is not among them: typer 0.29 coerces a command's option values with pydantic
#: once the group's callback runs (``octomem status --help``); bare ``octomem --help`` is
#: checked for it apart.
HEAVY = ("numpy", "onnxruntime", "ranx", "fastembed", "sqlite_vec", "apsw",
         "pydantic_settings", "pluggy", "prometheus_client", "urllib.request",
         "octomem.engine.settings", "octomem.engine.pipeline", "octomem.engine.memory",
         "octomem.plugins", "octomem.mcp_server", "octomem.benchmarks")

PROBE = """
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


def modules_after(*args: str) -> tuple[int, set[str]]:
    """Run the console entry point with ``args`` in a fresh interpreter; return its exit
    code and the names in its ``sys.modules`` afterwards."""
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(list(args))],
                          capture_output=True, text=True, timeout=120, check=False)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert "Usage" in done.stdout, done.stdout + done.stderr  # help was printed
    return report["code"], set(report["modules"])


@pytest.mark.parametrize("args", [("--help",), ("status", "--help"), ("config", "--help"),
                                  ("search", "--help"), ("log", "tail", "--help")])
def test_help_imports_neither_the_engine_nor_numeric_libraries(args: tuple[str, ...]) -> None:
    code, modules = modules_after(*args)
    assert code == 0
    loaded = sorted(m for m in modules for heavy in HEAVY if m == heavy or
                    m.startswith(heavy + "."))
    assert loaded == []
    assert {"typer", "rich", "octomem.engine.cli.commands"} <= modules  # the real help ran
    if args == ("--help",):
        assert "pydantic" not in modules


def test_a_command_still_loads_what_it_needs() -> None:
    """The light start is not a stub: ``plugins`` (which lists the installed arms) loads
    the plugin manager and the plugins when it runs."""
    done = subprocess.run([sys.executable, "-c", PROBE.replace("Usage", ""),
                           json.dumps(["plugins"])], capture_output=True, text=True,
                          timeout=120, check=False)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["code"] == 0
    assert {"pluggy", "octomem.plugins.sqlite", "octomem.plugins.fts5"} <= set(report["modules"])
    assert "fts5" in done.stdout
