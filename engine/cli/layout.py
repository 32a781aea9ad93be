"""Plain-text layout for CLI output that reads at any width and when piped: wrapped
paragraphs, aligned ``label  value`` rows and lists of entries, none ending in spaces and
none broken inside an entry.

Rich's tables and padding fill every line to the console's width with spaces and wrap
cells mid-entry; these helpers return plain lines instead. ``width`` is the console's
width in characters (Rich uses ``COLUMNS``, or 80 when the output is not a terminal).
"""

from __future__ import annotations

import functools
import io
import os
import sys
import textwrap
from collections.abc import Iterable, Sequence
from typing import IO, Any

from rich.cells import cell_len, set_cell_size
from rich.console import Console, ConsoleDimensions, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text

from ..controls import visible
from . import MIN_WIDTH

__all__ = ["SafeConsole", "aligned", "cut", "emit", "fitted", "folded", "packed", "visible",
           "wrapped"]

#: Exit status when the reader of the output went away (``octomem search | head -1``):
#: 128 + SIGPIPE (13), what a shell reports for a command a closed pipe ended (as 130, 128 +
#: SIGINT, after Ctrl-C); nothing is printed, as for ``yes | head -1``.
PIPE_CLOSED_STATUS = 141


def pipe_closed() -> int:
    """Point stdout at ``/dev/null`` so that what is still buffered or printed later goes
    nowhere (no second error at exit; Python's note on SIGPIPE), and return
    :data:`PIPE_CLOSED_STATUS`."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no stdout to point anywhere
        pass
    return PIPE_CLOSED_STATUS


class SafeConsole(Console):
    """A Rich console that shows control characters in what it prints as escapes
    (:func:`visible`): stored text (a hit, a session-start statement, a title) reaches the
    terminal as ``\x1b]0;...`` instead of retitling, clearing or beeping it.

    The escaping is applied to the rendered segments' text, after layout and before
    styles become escape codes, so Rich's own styling and cursor control still work.
    Rich's :class:`~rich.text.Text` already drops BEL, BS, VT, FF and CR on creation; CLI
    code builds lines from stored text with :func:`visible` first so those show too.

    ``COLUMNS=0`` counts as unset (80 columns when not a terminal), as ``COLUMNS=abc`` does:
    Rich would take it as a width of 0 and print nothing at all. A width below
    :data:`MIN_WIDTH` (``COLUMNS=3``, a sliver of a split pane) is laid out at
    :data:`MIN_WIDTH` and left to the terminal to wrap: at 3 columns a query came out three
    letters a line and a hit not at all (trial 15 F14).

    A console on stderr flushes stdout before each write (:class:`AfterStdout`), so on one
    pipe (``2>&1``) a warning follows the output printed before it, as it was said.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Build the console as Rich does; a width of 0 from ``COLUMNS`` is dropped."""
        super().__init__(*args, **kwargs)
        if kwargs.get("width") is None and self._width is not None and self._width <= 0:
            self._width = None  # size() then falls back to the terminal's, or 80

    @property
    def size(self) -> ConsoleDimensions:
        """The console's size as Rich finds it, at least :data:`MIN_WIDTH` columns wide."""
        found = Console.size.fget(self)  # type: ignore[attr-defined]
        return found if found.width >= MIN_WIDTH else ConsoleDimensions(MIN_WIDTH, found.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)  # type: ignore[attr-defined]

    @property
    def file(self) -> IO[str]:
        """The stream written to, as Rich picks it; stderr wrapped in :class:`AfterStdout`."""
        file = Console.file.fget(self)  # type: ignore[attr-defined]
        return AfterStdout(file) if file is sys.stderr else file

    @file.setter
    def file(self, new_file: IO[str]) -> None:
        self._file = new_file

    def on_broken_pipe(self) -> None:
        """End quietly with :data:`PIPE_CLOSED_STATUS` when the output's reader went away
        (Rich's own ends with status 1, which a pipeline under ``set -o pipefail`` takes
        for a failure)."""
        self.quiet = True
        raise SystemExit(pipe_closed())

    def render(self, renderable: RenderableType,
               options: ConsoleOptions | None = None) -> Iterable[Segment]:
        """Render as Rich does, control characters in text segments escaped."""
        for segment in super().render(renderable, options):
            if segment.control or segment.text.isprintable() or not segment.text:
                yield segment
            else:
                yield Segment(visible(segment.text), segment.style, segment.control)


class AfterStdout:
    """stderr written only after what Python holds of stdout is flushed: JSON, an export or a
    session-start text is written with ``print``/``write`` (block-buffered on a pipe), so on
    one pipe (``2>&1``) a warning said after it used to land before it, or inside it where a
    buffer's worth had gone out. Every other attribute is the stream's own."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        """Flush stdout, then write ``text`` to the stream; return the characters written."""
        flush_stdout()
        return self.stream.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def flush_stdout() -> None:
    """Flush ``sys.stdout`` (nothing when it is closed or gone: a closed pipe)."""
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except (OSError, ValueError):
        pass


def wrapped(text: str, width: int, indent: str = "", first: str | None = None) -> list[str]:
    """Return ``text`` wrapped to ``width`` columns, words never split (a word longer
    than a line gets a line of its own), no trailing spaces.

    :param indent: the start of every line after the first.
    :param first: the start of the first line (default ``indent``).
    """
    lead = indent if first is None else first
    return textwrap.wrap(text, max(width, len(lead) + 10), initial_indent=lead,
                         subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False) or [lead.rstrip()]


def cut(text: str, width: int) -> str:
    """Return ``text`` cut to at most ``width`` terminal cells, ending in "…" when cut.

    Cells as the terminal shows them (:func:`rich.cells.cell_len`: a CJK character or an
    emoji takes two, a combining mark none), not characters (trial 18 H12).
    """
    if cell_len(text) <= width:
        return text
    kept = set_cell_size(text, max(width - 1, 0))
    if not text.startswith(kept):  # a wide character's first half: padded with a space
        kept = kept[:-1]
    return kept + "…"


def folded(text: str, width: int) -> list[str]:
    """Return ``text`` on lines of at most ``width`` terminal cells, broken at spaces, a
    word wider than a line folded across lines (Rich's own wrapping, :meth:`Text.wrap
    <rich.text.Text.wrap>`, which counts cells: a CJK character or an emoji takes two),
    none ending in spaces; ``[""]`` for no text."""
    lines = Text(text).wrap(_measuring(), max(width, 2), overflow="fold")
    return [line.plain.rstrip() for line in lines] or [""]


@functools.cache
def _measuring() -> Console:
    """A console that only measures (Text.wrap asks one for its options; nothing prints)."""
    return Console(file=io.StringIO(), width=80)


def fitted(head: str, text: str, width: int, tail: str = "", cut_start: bool = False,
           least: int = 12) -> str:
    """Return ``head + text + tail`` on one line of at most ``width`` terminal cells,
    ``text`` folded to one line and cut with "…" (at its end, or at its start when
    ``cut_start``: a path keeps its file name) so that the whole line fits; ``text`` keeps
    at least ``least`` cells, so on a very narrow terminal the line may still be wider
    (the terminal folds it; nothing here re-wraps it inside a word).
    """
    flat = " ".join(text.split())
    room = max(least, width - cell_len(head) - cell_len(tail))
    if cell_len(flat) > room:
        if cut_start:
            flat = "…" + _cells_from_end(flat, room - 1)
        else:
            flat = set_cell_size(flat, room - 1).rstrip() + "…"
    return head + flat + tail


def _cells_from_end(text: str, cells: int) -> str:
    """The longest end of ``text`` at most ``cells`` terminal cells wide."""
    start, used = len(text), 0
    while start > 0 and used + cell_len(text[start - 1]) <= cells:
        start -= 1
        used += cell_len(text[start])
    return text[start:]


def packed(lead: str, entries: Sequence[str], width: int, indent: str = "  ",
           sep: str = ",") -> list[str]:
    """Return ``lead`` followed by ``entries`` separated by ``sep`` and a space, broken into
    lines of at most ``width`` columns only between entries (an entry wider than a line
    stands alone).

    :param indent: the start of every line after the first.
    """
    lines: list[str] = []
    line = lead
    for i, entry in enumerate(entries):
        piece = entry + (sep if i < len(entries) - 1 else "")
        joint = "" if not line or line.endswith(" ") else " "
        if len(line + joint + piece) <= width or line == indent:
            line += joint + piece
        else:
            lines.append(line)
            line = indent + piece
    lines.append(line)
    return lines


def aligned(rows: Sequence[tuple[str, str]], width: int, indent: str = "  ",
            gap: str = "  ") -> list[str]:
    """Return ``(label, value)`` rows as lines: labels in a column as wide as the widest,
    each value wrapped under itself (words never split).

    :param indent: what every line starts with.
    """
    column = max((len(label) for label, _ in rows), default=0)
    under = indent + " " * column + gap
    lines: list[str] = []
    for label, value in rows:
        lines += wrapped(value, width, under, first=indent + label.ljust(column) + gap)
    return lines


def emit(console: Console, lines: Sequence[str], style: str | None = None) -> None:
    """Print ``lines`` as they are: no markup, no highlighting, never re-wrapped or cut
    by Rich (a line wider than the console, e.g. a model id, is left to the terminal)."""
    for line in lines:
        console.print(Text(line, style=style or ""), no_wrap=True, overflow="ignore",
                      crop=False, highlight=False)
