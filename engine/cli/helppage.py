"""What a ``--help`` page shows, as plain data (no rich, no typer): :class:`HelpPage` and its
rows, and the Markdown subset of the help texts (:func:`pieces`).

:mod:`.helpview` draws a page with rich; :mod:`.fasthelp` draws ``octomem --help``'s without
importing rich; :mod:`.catalog` builds that page.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

#: A backtick code span (CommonMark: a run of backticks closed by a run of the same length).
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)


@dataclass(frozen=True)
class ParamRow:
    """One row of an Arguments or Options panel.

    :param long: the long names, comma-joined (``--top-k``).
    :param short: the short names (``-k``), or an argument's metavar (``QUERY``).
    :param kind: what the value is called (``N``, ``FILE``); empty for a flag.
    :param help: the help text (Markdown subset: paragraphs, `` `code` ``).
    :param extras: dim notes after the help (``[default: local]``).
    :param required: marked with ``*`` and ``[required]``.
    """

    long: str
    short: str = ""
    kind: str = ""
    help: str = ""
    extras: tuple[str, ...] = ()
    required: bool = False


@dataclass(frozen=True)
class HelpPage:
    """What a ``--help`` page shows, in order.

    :param usage: the usage line (``Usage: octomem search [OPTIONS] QUERY``).
    :param help: the command's help (first paragraph plain, the rest dim).
    :param arguments: panel title -> its rows, in order (``Arguments`` first).
    :param options: panel title -> its rows, in order (``Options`` first).
    :param commands: panel title -> ``(name, help)`` per subcommand (a group).
    """

    usage: str
    help: str = ""
    arguments: dict[str, list[ParamRow]] = field(default_factory=dict)
    options: dict[str, list[ParamRow]] = field(default_factory=dict)
    commands: dict[str, list[tuple[str, str]]] = field(default_factory=dict)


def summary(help_text: str) -> str:
    """Return a help text's first paragraph on one line (what a command list shows)."""
    return inspect.cleandoc(help_text).split("\n\n")[0].replace("\n", " ").strip()


def pieces(text: str) -> Iterator[tuple[str, bool]]:
    """Yield ``(text, is_code)`` pieces of a help text as Markdown shows it: paragraphs
    (split by blank lines) joined by ``"\n\n"``, a line break inside a paragraph a space,
    `` `code` `` spans without their backticks."""
    paragraphs = [p.strip() for p in re.split(r"\n[ \t]*\n", inspect.cleandoc(text))]
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
