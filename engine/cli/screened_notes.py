"""What an ingest says about documents the forget log kept out or let back.

A file or turn forgotten earlier is not re-added when read again (:mod:`..memory.tombstones`):
each is named as the user would name it from the current folder (``not re-added:
notes/meeting.md (forgotten ...)``), or said to be let back with ``--readd``; a turn whose
forgotten position now holds another text is stored under a fresh id (``new id: ...``).
A file named on the command line that stored nothing for this reason fails the command.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

if TYPE_CHECKING:
    from .ingesting import Tally


def say_screened(tally: Tally, out: Any, readd: bool, console: Console | None = None) -> None:
    """Name each document a tombstone kept out (``not re-added: FILE (forgotten ...)``) or
    let back (``readd``), and each turn stored under a fresh id; a file named on the
    command line that a tombstone kept out is refused (the ingest ends with status 1)."""
    from ..memory.readable import shown
    from ..memory.tombstones import LeftOut, notes

    here = Path.cwd().resolve()

    def where(one: LeftOut) -> str:  # as the user would name it here
        path = _path_of(one.source)
        if path is None:
            return one.source
        return shown(path.relative_to(here) if path.is_relative_to(here) else path)

    if console is not None:
        for line in notes(out.left_out, where, readd):
            console.print(Text(line), highlight=False, soft_wrap=True)
    for one in out.left_out:
        path = _path_of(one.source)
        if not readd and path is not None and path in tally.named and (
                one.forgotten.kind != "TURN" or not out.kept):  # named: it stored nothing
            tally.refused.append((path, f"{where(one)}: forgotten, nothing of it stored; "
                                  "octomem ingest --readd PATH stores it again"))
            tally.named.discard(path)  # said once
    for read, new in out.renamed:
        if console is not None:
            console.print(Text(f"new id: {read} was forgotten and now holds another text: "
                               f"stored as {new}"), highlight=False, soft_wrap=True)


def _path_of(uri: str) -> Path | None:
    """Return the file a ``file:`` uri names (resolved), else ``None``."""
    if not uri.startswith("file:"):
        return None
    from urllib.parse import unquote, urlparse

    return Path(unquote(urlparse(uri).path))
