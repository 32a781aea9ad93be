"""What a ``--help`` page shows, as plain data (no rich, no typer): :class:`HelpPage` and its
rows, and the Markdown subset of the help texts (:func:`pieces`).

:mod:`.helpview` draws a page with rich; :mod:`.fasthelp` draws ``octomem --help``'s without
importing rich; :mod:`.catalog` builds that page. Only :mod:`re` is imported here (no
``dataclasses``, ``typing`` or ``inspect``: ~10-20 ms of ``octomem --help``'s start).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

#: A backtick code span (CommonMark: a run of backticks closed by a run of the same length).
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)


class ParamRow:
    """One row of an Arguments or Options panel.

    :param long: the long names, comma-joined (``--top-k``).
    :param short: the short names (``-k``), or an argument's metavar (``QUERY``).
    :param kind: what the value is called (``N``, ``FILE``); empty for a flag.
    :param help: the help text (Markdown subset: paragraphs, `` `code` ``).
    :param extras: dim notes after the help (``[default: local]``).
    :param required: marked with ``*`` and ``[required]``.
    """

    __slots__ = ("extras", "help", "kind", "long", "required", "short")

    def __init__(self, long: str, short: str = "", kind: str = "", help: str = "",
                 extras: tuple[str, ...] = (), required: bool = False) -> None:
        self.long, self.short, self.kind, self.help = long, short, kind, help
        self.extras, self.required = extras, required

    def texts(self) -> tuple[str, ...]:
        """Return every text the row shows."""
        return (self.long, self.short, self.kind, self.help, *self.extras)


class HelpPage:
    """What a ``--help`` page shows, in order.

    :param usage: the usage line (``Usage: octomem search [OPTIONS] QUERY``).
    :param help: the command's help (first paragraph plain, the rest dim).
    :param arguments: panel title -> its rows, in order (``Arguments`` first).
    :param options: panel title -> its rows, in order (``Options`` first).
    :param commands: panel title -> ``(name, help)`` per subcommand (a group).
    """

    __slots__ = ("arguments", "commands", "help", "options", "usage")

    def __init__(self, usage: str, help: str = "",
                 arguments: dict[str, list[ParamRow]] | None = None,
                 options: dict[str, list[ParamRow]] | None = None,
                 commands: dict[str, list[tuple[str, str]]] | None = None) -> None:
        self.usage, self.help = usage, help
        self.arguments, self.options = arguments or {}, options or {}
        self.commands = commands or {}

    def texts(self) -> list[str]:
        """Return every text the page shows (titles, names, helps)."""
        out = [self.usage, self.help]
        for panels in (self.arguments, self.options):
            for title, rows in panels.items():
                out += [title, *(text for row in rows for text in row.texts())]
        for title, commands in self.commands.items():
            out += [title, *(text for command in commands for text in command)]
        return out


def cleandoc(text: str) -> str:
    """Return ``text`` as :func:`inspect.cleandoc` does (imported only for a text of
    several lines: the top-level page's texts have none)."""
    if "\n" not in text:
        return text.strip()
    import inspect

    return inspect.cleandoc(text)


def summary(help_text: str) -> str:
    """Return a help text's first paragraph on one line (what a command list shows)."""
    return cleandoc(help_text).split("\n\n")[0].replace("\n", " ").strip()


def pieces(text: str) -> Iterator[tuple[str, bool]]:
    """Yield ``(text, is_code)`` pieces of a help text as Markdown shows it: paragraphs
    (split by blank lines) joined by ``"\n\n"``, a line break inside a paragraph a space,
    `` `code` `` spans without their backticks."""
    paragraphs = [p.strip() for p in re.split(r"\n[ \t]*\n", cleandoc(text))]
    for number, paragraph in enumerate(p for p in paragraphs if p):
        if number:
            yield "\n\n", False
        flat = re.sub(r"[ \t]*\n[ \t]*", " ", paragraph)
        end = 0
        for span in CODE_SPAN.finditer(flat):
            yield flat[end:span.start()], False
            yield span.group(2).strip() or span.group(2), True
            end = span.end()
        yield flat[end:], False
