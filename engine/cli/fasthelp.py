"""``octomem --help``'s page drawn without importing rich, the same characters rich draws.

Importing rich's console, tables and panels costs about three times a bare interpreter's
start, more than everything else ``octomem --help`` does. The top-level page is simple —
the usage line, the group's help, an Options and a Commands panel of one-line names —
so this module lays it out as :mod:`.helpview` (rich) does: the same box characters, the
same column widths (rich's ``Table`` sizing for these two tables), the same word wrapping
(rich's ``divide_line``: greedy, a word's trailing spaces kept), the same styles as ANSI
codes on a terminal. It draws only where it is exact: a POSIX terminal or pipe with a
UTF-8 stdout, no variable that changes rich's choices (``FORCE_COLOR``, ``NO_COLOR``,
``TTY_COMPATIBLE``, ``TERMINAL_WIDTH``, ...), no dumb terminal, wide enough that no name
column has to shrink, and ASCII texts; anywhere else :func:`draw` declines and the caller
draws with rich. ``tests/test_cli_catalog.py`` compares both renderings, character for
character and style for style, at many widths.
"""

from __future__ import annotations

import os
import re
import sys

from .helppage import HelpPage, ParamRow, pieces

#: A character's look, the SGR attributes rich's styles here use: ``(bold, dim,
#: foreground code, background code)`` (36 cyan, 33 yellow, 40 black; 0 none).
Style = tuple[bool, bool, int, int]
PLAIN: Style = (False, False, 0, 0)
DIM: Style = (False, True, 0, 0)
OPTION: Style = (True, False, 36, 0)  # typer's "bold cyan" (option and command names)
TYPES: Style = (True, False, 33, 0)  # typer's "bold yellow" (metavars)
USAGE: Style = (True, False, 33, 0)  # "Usage: " ("yellow" under the line's "bold")
BOLD: Style = (True, False, 0, 0)

Cells = list[tuple[str, Style]]


def sgr(style: Style) -> str:
    """Return ``style``'s SGR parameters in rich's order (attributes, colour, background)."""
    bold, dim, color, bgcolor = style
    codes = [c for c, on in (("1", bold), ("2", dim)) if on]
    return ";".join(codes + [str(c) for c in (color, bgcolor) if c])

#: Environment variables under which rich decides differently (colour, terminal, width).
RICH_VARIABLES = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "PY_COLORS",
                  "GITHUB_ACTIONS", "_TYPER_FORCE_DISABLE_TERMINAL", "TERMINAL_WIDTH",
                  "JUPYTER_COLUMNS", "JUPYTER_LINES")
#: Words as rich's ``divide_line`` sees them: leading spaces, the word, trailing spaces.
WORD = re.compile(r"\s*\S+\s*")


class Unsupported(Exception):
    """The page or the terminal is one this module does not draw exactly."""


def terminal() -> tuple[int, bool]:
    """Return ``(width, colour)`` as rich's console would choose them for stdout.

    :raises Unsupported: anything but a plain POSIX terminal or pipe, UTF-8 encoded.
    """
    env = os.environ
    if os.name != "posix" or any(name in env for name in RICH_VARIABLES):
        raise Unsupported("environment")
    if env.get("NO_COLOR", "") or env.get("TERM", "").strip().lower() in ("dumb", "unknown"):
        raise Unsupported("terminal")
    if not (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "").startswith(
            "utf8"):
        raise Unsupported("encoding")
    try:
        colour = sys.stdout.isatty()
    except (AttributeError, ValueError):
        raise Unsupported("stdout") from None
    width = 0
    for descriptor in (0, 1, 2):  # rich asks stdin, stdout, stderr in turn
        try:
            width = os.get_terminal_size(descriptor).columns
        except (AttributeError, ValueError, OSError):
            continue
        break
    columns = env.get("COLUMNS")
    if columns is not None and columns.isdigit():
        width = int(columns)
    return width or 80, colour


def text(markdown: str, style: Style = PLAIN) -> Cells:
    """Return a help text's characters with their styles (code spans bold cyan on black,
    over ``style``)."""
    code: Style = (True, style[1], 36, 40)
    return [(char, code if is_code else style) for piece, is_code in pieces(markdown)
            for char in piece]


def wrap(cells: Cells, width: int) -> list[Cells]:
    """Wrap ``cells`` to ``width`` as rich's ``Text.wrap`` does (left-justified: every line
    padded to ``width``).

    :raises Unsupported: a word longer than the width (rich would fold it).
    """
    out: list[Cells] = []
    plain = "".join(char for char, _ in cells)
    start = 0
    for line in plain.split("\n"):
        chunk = cells[start:start + len(line)]
        start += len(line) + 1
        breaks, offset = [], 0
        for word in WORD.finditer(line):
            length = len(word.group().rstrip())
            if width - offset >= length:
                offset += len(word.group())
            elif length > width:
                raise Unsupported("a word wider than its column")
            elif offset and word.start():
                breaks.append(word.start())
                offset = len(word.group())
        for begin, end in zip([0, *breaks], [*breaks, len(line)], strict=True):
            piece = chunk[begin:end]
            if len(piece) > width:  # rich's rstrip_end: trailing spaces past the width
                excess = len(piece) - width
                spaces = len(piece) - len("".join(c for c, _ in piece).rstrip())
                piece = piece[:len(piece) - min(spaces, excess)]
            out.append(pad(piece[:width], width))
    return out


def pad(cells: Cells, width: int, style: Style = PLAIN) -> Cells:
    """Return ``cells`` padded with spaces to ``width``."""
    return cells + [(" ", style)] * (width - len(cells))


def lines_of(page: HelpPage, width: int) -> list[Cells]:
    """Return every line of ``page`` drawn ``width`` columns wide.

    :raises Unsupported: arguments, notes or required marks (not on the top page), or a
        width at which rich would shrink a name column.
    """
    if any(page.arguments.values()) or any(
            row.extras or row.required or row.short for rows in page.options.values()
            for row in rows):
        raise Unsupported("page")
    blank = [(" ", PLAIN)] * width
    usage = [(c, USAGE if i < 7 else BOLD) for i, c in enumerate(page.usage)]
    if len(usage) > width - 2 or not page.usage.startswith("Usage: "):
        raise Unsupported("usage")
    out = [framed(pad(usage, width - 2), " ", PLAIN), blank]  # as helpview: no line above
    if page.help:
        first, *rest = page.help.split("\n\n")
        body = wrap(text(first.strip()), width - 2)
        if rest:
            body += [pad([], width - 2)] + wrap(text("\n\n".join(rest), DIM), width - 2)
        out += [framed(line, " ", PLAIN) for line in body] + [blank]
    names = max((len(n) for rows in page.commands.values() for n, _ in rows), default=0)
    for title, rows in page.options.items():
        if rows:
            out += panel(title, option_rows(rows, width - 4), width)
    for title, commands in page.commands.items():
        if commands:
            out += panel(title, command_rows(commands, names, width - 4), width)
    return out


def framed(line: Cells, edge: str, style: Style) -> Cells:
    """Return ``line`` between two ``edge`` characters of ``style``."""
    return [(edge, style), *line, (edge, style)]


def panel(title: str, rows: list[Cells], width: int) -> list[Cells]:
    """Return a rounded, dim panel titled ``title`` around ``rows`` (``width - 4`` wide)."""
    name = f" {title} "
    top = [(c, DIM) for c in "╭─" + name + "─" * (width - 3 - len(name)) + "╮"]
    bottom = [(c, DIM) for c in "╰" + "─" * (width - 2) + "╯"]
    return [top, *[[("│", DIM), (" ", PLAIN), *row, (" ", PLAIN), ("│", DIM)]
                   for row in rows], bottom]


def option_rows(rows: list[ParamRow], inner: int) -> list[Cells]:
    """Return the Options table's lines: name, three empty columns, metavar, help (rich's
    column sizing: the help column, widest, shrinks by what the others need)."""
    names = max(len(row.long) for row in rows)
    kinds = max(len(row.kind) for row in rows)
    fixed = (names + 1) + 2 + 2 + 2 + (kinds + 2)
    if fixed > inner - max(names + 1, kinds + 2):  # rich would shrink other columns too
        raise Unsupported("narrow")
    helps = inner - fixed - 1
    out = []
    for row in rows:
        left = pad([(c, OPTION) for c in row.long], names) + [(" ", PLAIN)] * 8
        left += pad([(c, TYPES) for c in row.kind], kinds) + [(" ", PLAIN)] * 2
        for number, line in enumerate(wrap(text(row.help), helps) or [pad([], helps)]):
            out.append((left if number == 0 else pad([], len(left))) + line)
    return out


def command_rows(commands: list[tuple[str, str]], names: int, inner: int) -> list[Cells]:
    """Return the Commands table's lines: the name (bold cyan, ``names`` wide), then its
    summary wrapped in the rest."""
    out = []
    for name, summary in commands:
        left = pad([(c, OPTION) for c in name], names + 1, OPTION) + [(" ", PLAIN)]
        first = summary.split("\n\n")[0].replace("\n", " ").strip()
        for number, line in enumerate(wrap(text(first), inner - names - 2)):
            out.append((left if number == 0 else pad([], len(left), OPTION)) + line)
    return out


def ansi(line: Cells, colour: bool) -> str:
    """Return ``line`` as text, each run of one style in its SGR codes when ``colour``."""
    if not colour:
        return "".join(char for char, _ in line)
    out, run, style = [], "", PLAIN
    for char, look in [*line, ("", PLAIN)]:
        if look != style or not char:
            if run:
                codes = sgr(style)
                out.append(f"\x1b[{codes}m{run}\x1b[0m" if codes else run)
            run, style = "", look
        run += char
    return "".join(out)


def draw(page: HelpPage) -> bool:
    """Print ``page`` on stdout as rich would; return ``False`` (nothing printed) where
    this module would not be exact (see the module's description)."""
    try:
        width, colour = terminal()
        if not all(text.isascii() for text in page.texts()):
            raise Unsupported("non-ASCII text")
        lines = lines_of(page, width)
    except Unsupported:
        return False
    sys.stdout.write("".join(ansi(line, colour) + "\n" for line in lines))
    sys.stdout.flush()
    return True
