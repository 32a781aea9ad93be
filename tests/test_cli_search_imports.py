"""A fresh ``octomem search`` imports what a search needs (issue 15: a fresh search at 100k
≤ 0.5 s besides the model load).

Checked by import set in fresh processes (a wall time would be flaky on a loaded
machine): a search reads its settings without pydantic-settings (with asyncio and
dotenv) unless ``OCTOMEM_*`` variables are set, and builds the JSON result models only
to print JSON. The store is keyword-only (no embedder), so what the model's libraries
import (fastembed imports asyncio through tqdm) does not hide what the search imports.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import IMPORT_PROBE as PROBE

#: Modules a plain (text) search must not import: pydantic-settings and what it brings
#: (asyncio, dotenv), the JSON result models, urllib.request (http.client, ssl), the help
#: pages' renderer (rich's tables, columns and panels).
NOT_ON_THE_SEARCH_PATH = ("pydantic_settings", "asyncio", "dotenv", "urllib.request",
                          "http.client", "ssl", "octomem.engine.memory.results",
                          "octomem.engine.memory.turn_results", "octomem.engine.cli.helpview",
                          "rich.table", "rich.columns", "rich.panel")

KEYWORD_ONLY = ("--set", "pipeline.embedder=", "--set", "pipeline.semantic=")


def run(project: Path, *args: str, env: dict[str, str] | None = None
        ) -> tuple[int, str, set[str]]:
    """Run the console entry point in a fresh interpreter over ``project`` (keyword-only);
    return its exit code, its stdout and the names in its ``sys.modules`` afterwards."""
    argv = ["--project-root", str(project), *KEYWORD_ONLY, *args]
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(argv)],
                          capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, **(env or {})})
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report["code"], done.stdout, set(report["modules"])


def present(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules for n in names if m == n or m.startswith(n + "."))


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    """A project with two statements, written by a real ``add`` in a fresh process."""
    for text in ("the heron nests by the river", "the heron eats fish at dawn"):
        code, out, _ = run(tmp_path, "add", text, "--scope", "local")
        assert code == 0, out
    return tmp_path


@pytest.mark.slow
def test_a_search_reads_settings_without_pydantic_settings(project: Path) -> None:
    """A text search answers (both statements, the settings' default top_k) with none of
    :data:`NOT_ON_THE_SEARCH_PATH` imported; the settings were read and validated
    (pydantic, the settings module) and the arms built."""
    code, out, modules = run(project, "search", "heron")
    assert code == 0, out
    assert "river" in out and "dawn" in out
    assert present(modules, NOT_ON_THE_SEARCH_PATH) == []
    assert {"pydantic", "octomem.engine.settings", "octomem.plugins.fts5.arm"} <= modules


@pytest.mark.slow
def test_octomem_variables_are_still_read_and_checked(project: Path) -> None:
    """With an ``OCTOMEM_*`` variable set, pydantic-settings reads it: the search keeps one
    hit; a bad value is one line naming the variable, its value and the key."""
    code, out, modules = run(project, "search", "heron",
                             env={"OCTOMEM_RETRIEVAL__TOP_K": "1"})
    assert code == 0, out
    assert ("river" in out) != ("dawn" in out)  # one hit of the two
    assert "pydantic_settings" in modules
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(
            ["--project-root", str(project), *KEYWORD_ONLY, "search", "heron"])],
        capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "OCTOMEM_RETRIEVAL__TOP_K": "many"})
    assert done.stderr.splitlines()[0] == (
        "error: environment variable OCTOMEM_RETRIEVAL__TOP_K='many' (setting "
        "'retrieval.top_k'): Input should be a valid integer, unable to parse string as an "
        "integer")


@pytest.mark.slow
def test_json_output_builds_the_result_models(project: Path) -> None:
    """``--json`` still prints the answer through the result models (loaded then)."""
    code, out, modules = run(project, "search", "heron", "--json")
    assert code == 0, out
    answer = json.loads(out)
    assert sorted(h["text"] for h in answer["hits"]) == [
        "the heron eats fish at dawn", "the heron nests by the river"]
    assert "octomem.engine.memory.results" in modules
    assert "pydantic_settings" not in modules
