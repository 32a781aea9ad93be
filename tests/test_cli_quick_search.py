"""A plain ``octomem search`` is read without typer (:mod:`octomem.engine.cli.quick`, issue
15): the same values, output, errors and exit statuses as typer's reading, and typer
still reads every command line that is not plain."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import IMPORT_PROBE, octomem

from octomem.engine.cli import quick
from octomem.engine.cli.quick import parse_search


def test_a_plain_search_is_read_with_typer_s_values() -> None:
    """Global options, then ``search`` with options before and after the query."""
    plain = parse_search(["--project-root", "p", "--set", "a.b=1", "--set=c.d=2", "--debug",
                          "search", "-k", "3", "bone density", "--kind", "NOTE", "--tag=x",
                          "--tag", "y", "--json", "--per", "document", "--context", "2",
                          "--max-tokens", "500", "--as-of", "2026-01-01",
                          "--include-superseded", "--explain", "--scope", "local"])
    assert plain is not None
    assert plain.group == {"config": None, "set_": ["a.b=1", "c.d=2"], "data_dir": None,
                           "project_root": Path("p"), "global_root": None, "debug": True}
    assert plain.search == {
        "query": "bone density", "top_k": 3, "explain": True, "as_json": True,
        "kind": ["NOTE"], "tag": ["x", "y"], "scope": "local", "since": None, "until": None,
        "as_of": "2026-01-01", "history": True, "per": "document", "context": 2,
        "max_tokens": 500}
    assert parse_search(["search", "search"]).search["query"] == "search"  # type: ignore[union-attr]


@pytest.mark.parametrize("args", [
    [], ["status"], ["search"], ["search", "a", "b"], ["search", "a", "--help"],
    ["--help", "search", "a"], ["--version", "search", "a"], ["search", "a", "--top-k", "0"],
    ["search", "a", "-k"], ["search", "a", "-k3"], ["search", "a", "-k", "-1"],
    ["search", "a", "--top-k", "five"], ["search", "a", "--top-k", " 5"],
    ["search", "a", "--json=yes"], ["search", "a", "--json", "--json"],
    ["search", "a", "--scope", "local", "--scope", "global"], ["search", "--", "a"],
    ["search", "-"], ["search", ""], ["search", "a", "--kind", ""], ["search", "a", "--tag", "-x"],
    ["--nope", "search", "a"], ["--config", "search", "a"], ["x", "search", "a"],
    ["search", "a", "--context=-1"], ["search", "caf\udce9"],
])
def test_typer_reads_what_is_not_plain(args: list[str]) -> None:
    assert parse_search(args) is None


def test_typer_reads_a_completion(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_OCTOMEM_COMPLETE", "complete_bash")
    assert parse_search(["search", "a"]) is None


#: Command lines whose output (stdout, stderr, status) must be typer's, plain or not.
SAME_AS_TYPER = [
    ("search", "heron"), ("search", "heron", "--json"), ("search", "heron", "--explain", "-k", "1"),
    ("search", "heron", "--kind", "nope"), ("search", "heron", "--tag", " "),
    ("search", "heron", "--as-of", "someday"), ("search", "heron", "--context", "9"),
    ("search", "heron", "--per", "page"), ("search", "heron", "--scope", "nowhere"),
    ("search", "heron", "--max-tokens", "3"), ("--set", "nonsense", "search", "heron"),
    ("--set", "retrieval.top_k=1", "search", "heron"), ("search", "nothing-like-it-zzz"),
    ("--project-root", "no/such/folder", "search", "heron"), ("search", "heron", "-k", "0"),
]


@pytest.fixture(scope="module")
def herons(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("herons")
    for text in ("the heron nests by the river", "the heron eats fish at dawn"):
        octomem(project, "add", text, "--scope", "local")
    return project


@pytest.mark.parametrize("args", SAME_AS_TYPER)
def test_the_output_is_typer_s(args: tuple[str, ...], herons: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Each command line run as read here and as read by typer prints the same."""
    quick_run = octomem(herons, *args, ok=False)
    monkeypatch.setattr(quick, "parse_search", lambda args: None)
    typer_run = octomem(herons, *args, ok=False)
    assert (quick_run.code, untimed(quick_run.out), quick_run.err) == (
        typer_run.code, untimed(typer_run.out), typer_run.err)


def untimed(out: str) -> str:
    """``out`` without its times: the footer's milliseconds as ``T``, a JSON answer's
    ``timings_ms`` left out and its numbers to 6 places (a score's recency bonus moves
    with the clock between two runs by ~1e-9)."""
    if out.startswith("{"):
        answer = json.loads(out, parse_float=lambda x: round(float(x), 6))
        answer.pop("timings_ms")
        return json.dumps(answer)
    return re.sub(r"\d+ ms\b", "T", out)


@pytest.mark.slow
def test_a_plain_search_imports_no_typer(herons: Path) -> None:
    """A fresh plain search answers without importing typer (nor click); its ``--help``
    still goes through typer."""
    def modules(*args: str) -> tuple[int, str, set[str]]:
        argv = ["--project-root", str(herons), "--set", "pipeline.embedder=hashing", *args]
        done = subprocess.run([sys.executable, "-c", IMPORT_PROBE, json.dumps(argv)],
                              capture_output=True, text=True, timeout=300, check=False,
                              env={**os.environ, "COLUMNS": "200"})
        report = json.loads(done.stderr.strip().splitlines()[-1])
        return report["code"], done.stdout, set(report["modules"])

    code, out, loaded = modules("search", "heron")
    assert code == 0 and "river" in out and "dawn" in out
    assert not {m for m in loaded if m == "typer" or m.startswith(("typer.", "click"))}
    code, out, loaded = modules("search", "--help")
    assert code == 0 and "typer" in loaded


def _options_of(function: object) -> tuple[dict[str, set[str]], dict[str, object]]:
    """Return a typer command's option names by parameter and its parameters' defaults."""
    import inspect
    import typing

    names: dict[str, set[str]] = {}
    defaults: dict[str, object] = {}
    for name, param in inspect.signature(function, eval_str=True).parameters.items():  # type: ignore[arg-type]
        info = typing.get_args(param.annotation)[1]
        decls = [getattr(info, "default", None), *(getattr(info, "param_decls", None) or ())]
        names[name] = {d for d in decls if isinstance(d, str) and d.startswith("-")}
        defaults[name] = param.default
    return names, defaults


def test_the_tables_follow_the_typer_signatures() -> None:
    """Every option of ``search`` and of the group is in :mod:`quick`'s tables under the
    same parameter, with the same default (``--version`` excepted: typer reads it)."""
    from octomem.engine.cli import commands

    names, defaults = _options_of(commands.search)
    tables = {**quick.SEARCH_VALUES, **{k: (v, "flag") for k, v in quick.SEARCH_FLAGS.items()}}
    assert {opt: key for opt, (key, _) in tables.items()} == {
        opt: key for key, opts in names.items() for opt in opts}
    assert {k: v for k, v in defaults.items() if k != "query"} == quick.SEARCH_DEFAULTS
    names, defaults = _options_of(commands._main)
    del names["_"], defaults["_"]  # --version
    tables = {**quick.GLOBAL_VALUES, **{k: (v, "flag") for k, v in quick.GLOBAL_FLAGS.items()}}
    assert {opt: key for opt, (key, _) in tables.items()} == {
        opt: key for key, opts in names.items() for opt in opts}
    assert defaults == quick.GLOBAL_DEFAULTS
