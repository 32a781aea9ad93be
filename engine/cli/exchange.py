"""The commands ``octomem export`` and ``octomem import``: a scope to a file and back
(:mod:`octomem.engine.memory.transfer` does the work)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TextIO

import typer
from rich.text import Text

from . import options as opt
from .commands import _memory, console, err
from .context import note_project
from .entry import close_memory
from .lazy import registry
from .options import Command
from .values import plural


@registry.command("export", cls=Command)
def export_(
    path: Annotated[Path, typer.Argument(help=(
        "File to write (`-` for stdout); an existing file is kept unless `--force`."))],
    scope: opt.ExportScopeOpt = "local",
    fmt: Annotated[str, typer.Option(
        "--format", help="`jsonl` (lossless, for import) or `md` (for people).")] = "jsonl",
    force: Annotated[bool, typer.Option(
        "--force", help="Replace an existing file (once the export is complete).")] = False,
) -> None:
    """Export a scope: JSON Lines round-trips losslessly through `octomem import` (ids,
    kinds, tags, times, supersede links, recall counts); Markdown is for reading."""
    from ..errors import OctomemError, UsageValueError
    from ..memory.transfer import export_scope
    from . import memory as show

    if fmt not in ("jsonl", "md"):  # before the file is created
        raise UsageValueError(f"--format: must be 'jsonl' or 'md', got {fmt!r}")
    if str(path) != "-" and path.exists() and not (force and path.is_file()):
        raise OctomemError(
            f"{path} is a folder; name a file to export to" if path.is_dir()
            else f"{path} exists; pass --force to replace it, or `-` to write to stdout"
            if path.is_file() else f"{path} is not a regular file (a device, a pipe or a "
            "link to one); export replaces regular files only: use `-` to write to stdout")
    memory, left_out = _memory(), []
    try:
        if str(path) == "-":
            written = export_scope(memory, show.check_write_scope(scope), fmt, sys.stdout, left_out)
        else:
            written = _write_whole(path, lambda out: export_scope(
                memory, show.check_write_scope(scope), fmt, out, left_out))
            err.print(f"exported {plural(written, 'document')} of the {scope} scope to {path}")
        for why in left_out:
            err.print(Text.assemble(("warning: ", "yellow"), why))
    finally:
        close_memory(memory)


def _write_whole(path: Path, write: Callable[[TextIO], int]) -> int:
    """Run ``write`` into a new private file beside ``path``, then move it onto ``path``:
    a failed export leaves no partial file and an existing ``path`` as it was.

    :returns: what ``write`` returned.
    :raises OSError: the file cannot be written or moved.
    """
    import os

    from ..files import open_private

    part = path.with_name(f".{path.name}.octomem-part")
    try:
        with open_private(part) as out:
            written = write(out)
        os.replace(part, path)
    finally:
        part.unlink(missing_ok=True)
    return written


@registry.command("import", cls=Command)
def import_(
    path: Annotated[Path, typer.Argument(help="A JSONL file written by `octomem export`.")],
    scope: Annotated[str | None, typer.Option(
        "--scope", help=(
            "Scope to import into (default: the one the file was exported from)."))] = None,
) -> None:
    """Import a JSONL export: documents keep their ids, history and recall counts;
    statements this scope has forgotten are skipped; a record older than the stored
    document (a lower revision, or not yet superseded) never replaces it; the file is
    stored whole or not at all; vectors are computed again."""
    from ..memory.transfer import ImportInterrupted, import_lines
    from . import memory as show
    from .unembedded import say_unembedded

    memory = _memory()
    try:
        with path.open(encoding="utf-8-sig") as lines:  # a leading byte-order mark dropped
            report = import_lines(memory, lines, str(path), scope, lambda: err.print(
                "note: an ingest is storing or embedding in this scope: waiting until it is "
                "done", highlight=False))
        note_project(memory, report.scope)  # the file's own scope when --scope is not given
        show.import_report(console, report)
    except ImportInterrupted as stop:
        done = stop.report
        err.print(Text(
            f"interrupted while embedding: {len(done.added):,} added, {len(done.replaced):,} "
            f"replaced, {len(done.unchanged):,} unchanged (stored in one transaction before "
            "the embedding); the same import again, or `octomem reindex`, embeds the rest"))
        say_unembedded(err, [(done.scope, memory.scopes.require(done.scope))])
        raise typer.Exit(130) from None
    finally:
        close_memory(memory)
