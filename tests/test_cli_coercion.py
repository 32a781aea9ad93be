"""Option values parsed without typer's pydantic adapters where those would return them
unchanged (:class:`octomem.engine.cli.options.DeferredCoercion`), the same values and
errors as typer's own coercion otherwise."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from typer.testing import CliRunner

from octomem.engine.cli.options import Command


def run(*args: str) -> tuple[int, str, dict[str, object]]:
    seen: dict[str, object] = {}
    app = typer.Typer()

    @app.command(cls=Command)
    def probe(
        text: Annotated[str, typer.Argument()],
        count: Annotated[int, typer.Option("--count")] = 3,
        ratio: Annotated[float | None, typer.Option("--ratio")] = None,
        where: Annotated[Path | None, typer.Option("--where", exists=True)] = None,
        plain: Annotated[Path | None, typer.Option("--plain")] = None,
        tags: Annotated[list[str] | None, typer.Option("--tag")] = None,
    ) -> None:
        seen.update(text=text, count=count, ratio=ratio, where=where, plain=plain, tags=tags)

    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})  # one-line errors
    return result.exit_code, result.output, seen


def test_values_keep_their_types_and_paths_become_paths(tmp_path: Path) -> None:
    code, out, seen = run("hello", "--count", "7", "--ratio", "0.5", "--where", str(tmp_path),
                          "--plain", "x/y", "--tag", "a", "--tag", "b")
    assert code == 0, out
    assert seen == {"text": "hello", "count": 7, "ratio": 0.5, "where": tmp_path,
                    "plain": Path("x/y"), "tags": ["a", "b"]}
    code, out, seen = run("hello")
    assert code == 0 and seen == {"text": "hello", "count": 3, "ratio": None, "where": None,
                                  "plain": None, "tags": None}


def test_bad_values_are_still_refused_by_typers_rules(tmp_path: Path) -> None:
    code, out, _ = run("hello", "--count", "seven")
    assert code == 2 and "--count" in out
    code, out, _ = run("hello", "--where", str(tmp_path / "missing"))
    assert code == 2 and "does not exist" in out
