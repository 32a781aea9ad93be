"""``--help`` pages drawn with rich's console, tables and panels, without typer's renderer.

typer draws help through ``typer.rich_utils``, whose import alone (rich's Markdown parser
``markdown_it``, rich tracebacks, pretty-printing, pygments) costs more than everything
else ``octomem --help`` does. This module draws the same page from plain rows: the usage
line, the help text, then an Arguments, an Options and a Commands panel, laid out and
styled as typer 0.29 lays them out. The help texts are Markdown of the subset octomem's
texts use: paragraphs and `` `code` `` spans (a test compares every command's page with
typer's own, character for character: ``tests/test_cli_help_view.py``).

:func:`page_of` reads a click command (options, metavars, defaults); the top-level page
of ``octomem --help`` is built from :mod:`.catalog` alone, without typer
(:func:`.catalog.top_page`).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterable, Sequence
from typing import Any

from rich.align import Align
from rich.columns import Columns
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.highlighter import RegexHighlighter
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text
from rich.theme import Theme

from .helppage import HelpPage, ParamRow, pieces, summary

__all__ = ["HelpPage", "ParamRow", "page_of", "print_page", "summary"]

#: typer's help styles (``typer.rich_utils``: option names, metavars, usage line, panels).
THEME = {"option": "bold cyan", "switch": "bold green", "negative_option": "bold magenta",
         "negative_switch": "bold red", "types": "bold yellow", "types_sep": "dim",
         "usage": "yellow"}
#: Inline code in a help text, as rich's Markdown styles it.
CODE_STYLE = "markdown.code"
#: The remaining paragraphs of a command's help are dim (typer's ``STYLE_HELPTEXT``).
DIM = "dim"


class OptionHighlighter(RegexHighlighter):
    """Colour option names (``--top-k``, ``-k``), ``<types>`` and ``Usage:``."""

    highlights = [r"(^|\W)(?P<switch>\-\w+)(?![a-zA-Z0-9])",
                  r"(^|\W)(?P<option>\-\-[\w\-]+)(?![a-zA-Z0-9])",
                  r"(?P<types>\<[^\>]+\>)", r"(?P<usage>Usage: )"]


class TypesHighlighter(RegexHighlighter):
    """Dim the brackets and bars around a metavar."""

    highlights = [r"^(?P<types_sep>(\[|<))", r"(?P<types_sep>\|)",
                  r"(?P<types_sep>(\]|>))(\.\.\.)?$"]


highlighter = OptionHighlighter()
types_highlighter = TypesHighlighter()


class Block:
    """A help text drawn as rich draws a Markdown paragraph: wrapped to the width given,
    measured as taking all of it (as rich's ``Markdown``, so table columns size alike)."""

    def __init__(self, text: Text) -> None:
        self.text = text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """Yield the text, left-justified."""
        yield self.text


def markdown(text: str, style: str = "") -> Block:
    """Return ``text`` (Markdown: paragraphs split by blank lines, `` `code` `` spans) as a
    :class:`Block`; a single line break inside a paragraph is a space, as in Markdown.

    :param style: the base style of the whole text (``dim``).
    """
    out = Text(justify="left")  # the style on the words, not the padding (as Markdown)
    for piece, code in pieces(text):
        start = len(out)
        out.append(piece, style=style)
        if code:
            out.stylize(CODE_STYLE, start, len(out))
    return Block(out)


def make_console() -> Console:
    """Return the console help is printed on: stdout, typer's theme and highlighter,
    colour when stdout is a terminal (``FORCE_COLOR``, ``PY_COLORS`` or
    ``GITHUB_ACTIONS`` force it; ``TERMINAL_WIDTH`` fixes the width), as typer's is."""
    forced = os.getenv("GITHUB_ACTIONS") or os.getenv("FORCE_COLOR") or os.getenv("PY_COLORS")
    force_terminal = False if os.getenv("_TYPER_FORCE_DISABLE_TERMINAL") else (
        True if forced else None)
    width = os.getenv("TERMINAL_WIDTH")
    return Console(theme=Theme(THEME), highlighter=highlighter, color_system="auto",
                   force_terminal=force_terminal, width=int(width) if width else None)


def print_page(page: HelpPage, console: Console | None = None) -> None:
    """Print ``page`` on ``console`` (default: :func:`make_console`)."""
    console = console or make_console()
    # no blank line above the usage: `octomem --help | head -1` shows it (trial 14)
    console.print(Padding(highlighter(page.usage), (0, 1, 1, 1)), style="bold")
    if page.help:
        first, *rest = inspect.cleandoc(page.help).partition("\f")[0].split("\n\n")
        parts: list[Any] = [markdown(first.strip())]
        if rest:
            parts += [Text(""), markdown("\n\n".join(rest), DIM)]
        console.print(Padding(Align(Group(*parts), pad=False), (0, 1, 1, 1)))
    for panels in (page.arguments, page.options):
        for title, rows in panels.items():
            if rows:
                console.print(_panel(title, _params_table(rows)))
    width = max((len(name) for rows in page.commands.values() for name, _ in rows), default=0)
    for title, commands in page.commands.items():
        if commands:
            console.print(_panel(title, _commands_table(commands, width)))


def _panel(title: str, table: Table) -> Panel:
    return Panel(table, border_style="dim", title=title, title_align="left")


def _table(highlight: bool) -> Table:
    return Table(highlight=highlight, show_header=False, expand=True, box=None,
                 show_lines=False, leading=0, border_style=None, row_styles=None,
                 pad_edge=False, padding=(0, 1))


def _params_table(rows: Sequence[ParamRow]) -> Table:
    table = _table(highlight=True)
    marks = any(row.required for row in rows)
    for row in rows:
        notes: list[Any] = [markdown(row.help.replace("\n\n", "\n").strip())] if row.help else []
        notes += [Text(extra, style="dim") for extra in row.extras]
        if row.required:
            notes.append(Text("[required]", style="dim red"))
        cells: list[Any] = [highlighter(row.long), highlighter(row.short), Text(""), Text(""),
                            types_highlighter(Text(row.kind, style="bold yellow",
                                                   overflow="fold")),
                            notes[0] if len(notes) == 1 else Columns(notes)]
        if marks:
            cells.insert(0, Text("*", style="red") if row.required else "")
        table.add_row(*cells)
    return table


def _commands_table(commands: Iterable[tuple[str, str]], width: int) -> Table:
    table = _table(highlight=False)
    table.add_column(style="bold cyan", no_wrap=True, width=width)
    table.add_column("Description", justify="left", no_wrap=False, ratio=10)
    for name, help_text in commands:
        table.add_row(Text(name), markdown(summary(help_text)))
    return table


def page_of(command: Any, ctx: Any, commands: dict[str, list[tuple[str, str]]] | None = None
            ) -> HelpPage:
    """Return the help page of a click ``command`` (typer's parameters: metavars,
    defaults, panels), as typer's renderer would lay it out.

    :param ctx: the command's click context.
    :param commands: a group's subcommands by panel (``None``: none).
    """
    arguments: dict[str, list[ParamRow]] = {"Arguments": []}
    options: dict[str, list[ParamRow]] = {"Options": []}
    for param in command.get_params(ctx):
        if getattr(param, "hidden", False):
            continue
        is_argument = param.param_type_name == "argument"
        panels = arguments if is_argument else options
        title = getattr(param, "rich_help_panel", None) or (
            "Arguments" if is_argument else "Options")
        panels.setdefault(title, []).append(_row(param, ctx, is_argument))
    text = ("(deprecated) " if command.deprecated else "") + (command.help or "")
    return HelpPage(command.get_usage(ctx), text, arguments, options, commands or {})


def _row(param: Any, ctx: Any, is_argument: bool) -> ParamRow:
    """Return one parameter's row (its names, metavar, help, default, required)."""
    name = param.metavar or param.name
    if is_argument and param.metavar is None and param.nargs != 1:
        name += "..."
    long = [o for o in param.opts if "--" in o]
    short = [o if not is_argument else name for o in param.opts if "--" not in o]
    display = getattr(param, "display_type_rich", None)  # typer 0.29's; else the metavar
    kind = (display(ctx=ctx) if display else param.metavar) or ""
    extras = []
    default = getattr(param, "_extract_default_help_str", None)
    value = default(ctx=ctx) if default else None
    shown = isinstance(param.show_default, str)
    if default and (shown or (value is not None and (param.show_default or ctx.show_default))):
        text = param._get_default_string(ctx=ctx, show_default_is_str=shown, default_value=value)
        if text:
            extras.append(f"[default: {text}]")
    return ParamRow(",".join(long), ",".join(short), kind, getattr(param, "help", "") or "",
                    tuple(extras), bool(param.required))
