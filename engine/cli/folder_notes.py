"""What ``octomem ingest`` says about the files in named folders it did not read.

Files left alone (another suffix, a ``.jsonl`` file that is no transcript, a special
file: :func:`say_left_alone`), paths the ignore rules left out (:func:`say_left_out`)
named folders whose transcripts hold no turn (:func:`turnless`), and files that moved
here (:func:`say_moved`). The command that says them: :mod:`.ingesting`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from .values import plural

#: How many of the files a folder ingest left alone are named (then "and N more").
LEFT_ALONE_NAMED = 5


def say_left_alone(err: Console, files: list[Path], fmt: str) -> None:
    """Say which files in the named folders were not read, and why: each ``.jsonl`` file,
    text file or special file on a line of its own (the surprising ones; up to
    :data:`LEFT_ALONE_NAMED`, then how many more), then the files of other suffixes on
    one line (the first :data:`LEFT_ALONE_NAMED` named, then how many more)."""
    from ..memory.readable import is_special, shown
    from ..memory.sources import TEXT_SUFFIXES, TRANSCRIPT_SUFFIX

    readable = TEXT_SUFFIXES | {TRANSCRIPT_SUFFIX}
    odd = [f for f in files if is_special(f) or f.suffix.lower() in readable]
    other = [f for f in files if f not in odd]
    err.print(Text(f"left alone: {plural(len(files), 'file')} in the folders, not read:"),
              highlight=False)
    for file in odd[:LEFT_ALONE_NAMED]:
        err.print(Text(f"  {shown(file)}: {left_alone_why(file, fmt)}"), highlight=False,
                  soft_wrap=True)
    if len(odd) > LEFT_ALONE_NAMED:
        err.print(Text(f"  and {len(odd) - LEFT_ALONE_NAMED:,} more such files"),
                  highlight=False)
    if other:
        named = ", ".join(shown(f) for f in other[:LEFT_ALONE_NAMED])
        more = f" and {len(other) - LEFT_ALONE_NAMED:,} more" \
            if len(other) > LEFT_ALONE_NAMED else ""
        err.print(Text(f"  not a text file or transcript (reads {', '.join(sorted(readable))}):"
                       f" {named}{more}"), highlight=False, soft_wrap=True)


def left_alone_why(file: Path, fmt: str) -> str:
    """Return why a folder ingest left ``file`` (special, ``.jsonl`` or text) alone."""
    from ..memory.readable import is_special
    from ..memory.sources import TRANSCRIPT_SUFFIX
    from ..memory.transcripts import not_a_transcript

    if is_special(file):
        return "not a regular file (a FIFO, socket or device): never read"
    if file.suffix.lower() != TRANSCRIPT_SUFFIX:
        return f"a text file: --format {fmt} reads {TRANSCRIPT_SUFFIX} transcripts only"
    if fmt == "text":
        return "a .jsonl file: --format text reads text files only"
    message = str(not_a_transcript(file)).removeprefix(str(file))
    return "a .jsonl file that is no transcript: " + message.removeprefix(":1").removeprefix(": ")


def say_left_out(err: Console, left_out: list[tuple[Path, str]]) -> None:
    """Say on stderr what the ignore rules left out of the folders (the first few, each
    with its rule) and how to read it."""
    folders = sum(p.is_dir() for p, _ in left_out)
    counts = ", ".join(plural(n, what) for n, what in ((folders, "folder"),
                                                        (len(left_out) - folders, "file")) if n)
    shown = [f"{p}{'/' if p.is_dir() else ''} ({why})" for p, why in left_out[:5]]
    more = f", and {len(left_out) - 5} more" if len(left_out) > 5 else ""
    err.print(Text(f"left out: {counts} in the folders ({', '.join(shown)}{more}); "
                   "--include-ignored reads them, as does naming a file itself"), highlight=False)


def turnless(paths: Iterable[Path], files: list[Path],
             transcripts: list[tuple[Path, list[Any]]]) -> list[tuple[Path, str]]:
    """Return ``(folder, why)`` for each named folder whose transcripts hold no turn at
    all and that holds none of ``files`` (its text files, and those skipped for an error,
    which say why themselves): nothing in it could be stored."""
    out = []
    for folder in (p for p in paths if p.is_dir()):
        inside = [t for path, t in transcripts if path.is_relative_to(folder)]
        if inside and not any(inside) and not any(f.is_relative_to(folder) for f in files):
            out.append((folder, f"{folder}: no turns in its {plural(len(inside), 'transcript')}"
                                " (each noted above)"))
    return out


def keeping(docs: Iterable[Any], into: list[Any]) -> Iterator[Any]:
    """Yield ``docs``, each also appended to ``into``."""
    for doc in docs:
        into.append(doc)
        yield doc


def say_moved(console: Console, pipeline: Any, scope: str, read: list[Any],
              added: list[str]) -> None:
    """Forget the documents of the files that moved to where ``added`` files were read
    (:func:`~..memory.moved.forget_moved`) and say each on a ``moved:`` line."""
    from ..memory.moved import forget_moved
    from .layout import visible
    from .memory import named_here

    for old, path in forget_moved(scope, pipeline, read, added):
        console.print(f"moved: {visible(named_here(old))} -> {visible(named_here(path))}: the "
                      "document stored from the old path is forgotten", highlight=False,
                      soft_wrap=True, markup=False)
