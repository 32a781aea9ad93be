"""``octomem --help`` starts light: the modules a fresh process holds after printing help.

Measured by import set, not wall time (the machine's load would make a time flaky):
``octomem --help`` loads neither typer nor rich (its page comes from the catalog), a
command's help typer, rich and that command's module; the engine (pydantic settings, the
pipeline, the plugins) and the numeric libraries (numpy, onnxruntime, ranx) load when a
command runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from cli_run import IMPORT_PROBE as PROBE

#: Modules ``--help`` must not import (each costs 50-500 ms of a fresh process's start):
#: the engine, the numeric libraries, pydantic (typer 0.29 coerces values with it: not an
#: unset one, :class:`octomem.engine.cli.options.DeferredCoercion`), and typer's help
#: renderer with rich's Markdown parser (:mod:`octomem.engine.cli.helpview` draws help).
HEAVY = ("numpy", "onnxruntime", "ranx", "fastembed", "sqlite_vec", "apsw",
         "pydantic", "pydantic_settings", "pluggy", "prometheus_client", "urllib.request",
         "typer.rich_utils", "rich.markdown", "markdown_it", "pygments",
         "octomem.engine.settings", "octomem.engine.pipeline", "octomem.engine.memory",
         "octomem.plugins", "octomem.mcp_server", "octomem.benchmarks")
#: The modules registering commands other than :mod:`octomem.engine.cli.commands`.
COMMAND_MODULES = {"octomem.engine.cli.bench", "octomem.engine.cli.observe",
                   "octomem.engine.cli.verify", "octomem.engine.cli.view"}



#: Variables that make rich (and so :mod:`octomem.engine.cli.fasthelp`) choose otherwise.
RICH_VARIABLES = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "PY_COLORS",
                  "GITHUB_ACTIONS", "_TYPER_FORCE_DISABLE_TERMINAL", "TERMINAL_WIDTH",
                  "NO_COLOR")


def modules_after(*args: str) -> tuple[int, set[str]]:
    """Run the console entry point with ``args`` in a fresh interpreter (stdout a pipe, a
    plain environment); return its exit code and the names in its ``sys.modules``
    afterwards."""
    env = {k: v for k, v in os.environ.items() if k not in RICH_VARIABLES}
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(list(args))],
                          capture_output=True, text=True, timeout=120, check=False, env=env)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert "Usage" in done.stdout, done.stdout + done.stderr  # help was printed
    return report["code"], set(report["modules"])


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules for name in HEAVY if m == name or m.startswith(name + "."))


@pytest.mark.parametrize("args", [("status", "--help"), ("config", "--help"),
                                  ("search", "--help"), ("log", "tail", "--help"),
                                  ("--project-root", ".", "search", "--help")])
def test_help_imports_neither_the_engine_nor_numeric_libraries(args: tuple[str, ...]) -> None:
    """A command's help loads typer and that command's module only: no pydantic, no
    Markdown parser, no other command's module."""
    code, modules = modules_after(*args)
    assert code == 0
    assert heavy(modules) == []
    assert {"typer", "rich", "octomem.engine.cli.commands"} <= modules  # the real help ran
    wanted = {"octomem.engine.cli.observe"} if args[0] == "log" else set()
    assert modules & COMMAND_MODULES == wanted


@pytest.mark.parametrize("args", [("--help",), ()])
def test_top_level_help_needs_neither_typer_nor_a_command(args: tuple[str, ...]) -> None:
    """``octomem --help`` (and bare ``octomem``, status 2 as click's) is drawn from the
    catalog without rich (:mod:`octomem.engine.cli.fasthelp`): typer, click, rich and every
    command module stay unimported."""
    code, modules = modules_after(*args)
    assert code == (0 if args else 2)
    assert heavy(modules) == []
    assert {"octomem.engine.cli.catalog", "octomem.engine.cli.fasthelp"} <= modules
    assert not {m for m in modules if m.split(".")[0] in ("typer", "click", "rich")}
    assert "octomem.engine.cli.commands" not in modules and not modules & COMMAND_MODULES


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


#: What ``status`` and ``config`` must not import (issue 15): the numeric libraries and
#: the model runtime; they open the stores, load the plugins and read the settings only.
NUMERIC = ("numpy", "onnxruntime", "ranx", "fastembed", "tokenizers", "sqlite_vec")


def run_probe(*args: str) -> tuple[int, str, set[str]]:
    """Run the console entry point with ``args`` in a fresh interpreter; return its exit
    code, its stdout and the names in its ``sys.modules`` afterwards."""
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(list(args))],
                          capture_output=True, text=True, timeout=300, check=False)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report["code"], done.stdout, set(report["modules"])


def numeric(modules: set[str]) -> list[str]:
    return sorted(m for m in modules for heavy in NUMERIC
                  if m == heavy or m.startswith(heavy + "."))


@pytest.mark.slow
def test_status_and_config_import_no_numeric_library(tmp_path) -> None:
    """A store with a chunk and its vector (written by a real ``add``, which loads the
    model), then ``status`` and ``config`` in fresh processes: right answers, and neither
    numpy nor onnxruntime nor ranx in ``sys.modules``."""
    root = ["--project-root", str(tmp_path)]
    code, _, modules = run_probe(*root, "add", "the heron nests by the river", "--scope", "local")
    assert code == 0 and "numpy" in modules  # adding embeds: the probe sees real imports
    code, out, modules = run_probe(*root, "status")
    assert code == 0, out
    assert numeric(modules) == []
    assert {"octomem.plugins.sqlite_vec.arm", "octomem.plugins.fastembed.embedder",
            "octomem.plugins.conversation.ranker", "apsw"} <= modules  # the arms were built
    local = " ".join(out.split("global")[0].split())
    assert "documents 1 " in local and "every one with a vector" in local
    assert "semantic available" in local
    code, out, modules = run_probe(*root, "config")
    assert code == 0, out
    assert numeric(modules) == []
    assert "pipeline.embedder" in out and "arms.sqlite-vec.scan" in out


def test_status_says_a_missing_model_is_unavailable_without_loading_it(tmp_path) -> None:
    """The light check still finds what loading would: a ``model_path`` with no ONNX
    file makes ``semantic`` unavailable, naming the folder, with onnxruntime not imported."""
    empty = tmp_path / "model"
    empty.mkdir()
    (tmp_path / "project").mkdir()
    args = ["--project-root", str(tmp_path / "project"), "--set",
            f"arms.fastembed.model_path={empty}", "--set", "arms.fastembed.dim=384"]
    code, out, modules = run_probe(*args, "add", "a note kept without a vector",
                                   "--scope", "local")
    assert code == 0, out
    code, out, modules = run_probe(*args, "status")
    assert code == 0, out
    assert numeric(modules) == []
    flat = " ".join(out.split())
    assert "semantic unavailable" in flat and str(empty) in flat
