"""The light table ``octomem --help`` is drawn from, and the help renderer, agree with the
commands themselves and with typer's own renderer.

:mod:`octomem.engine.cli.catalog` names every command and its summary without importing
any; :mod:`octomem.engine.cli.helpview` draws help pages without typer's renderer. Each
page is compared with typer's (``typer.rich_utils.rich_format_help``) over the fully
loaded commands: the same characters at 80 and 100 columns, and, in colour, the same
style on every visible character (a span may be split differently; that shows nothing).
The page ``octomem --help`` draws without rich (:mod:`octomem.engine.cli.fasthelp`) is
compared with rich's the same way, at widths from 64 to 251 columns and in a real
pseudo-terminal.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
import typer
import typer.main
from rich.console import Console
from rich.text import Text
from typer import rich_utils

from octomem.engine.cli import app, catalog, fasthelp, helpview, lazy

#: Every command module, imported so that the registry holds every command.
MODULES = {entry.module for entry in catalog.COMMANDS}


def registered() -> dict[str, Any]:
    """Return every command and group on the registry by name, built by typer."""
    group = typer.main.get_command(app)
    ctx = group.context_class(group, info_name="octomem")
    return {name: group.get_command(ctx, name) for name in group.list_commands(ctx)}


def rendered(draw: Callable[[], None], monkeypatch: pytest.MonkeyPatch, width: int,
             color: bool) -> str:
    """Return what ``draw`` prints when both renderers print on one captured console."""
    out = io.StringIO()

    def console(stderr: bool = False) -> Console:
        return Console(theme=helpview.Theme(helpview.THEME), highlighter=helpview.highlighter,
                       file=out, width=width, force_terminal=color,
                       color_system="standard" if color else None)

    monkeypatch.setattr(rich_utils, "_get_rich_console", console)
    monkeypatch.setattr(helpview, "make_console", console)
    draw()
    return out.getvalue()


def styled(ansi: str) -> list[tuple[str, str]]:
    """Return each character of an ANSI text with the style it shows (a space: only its
    background, the one style a space shows)."""
    text = Text.from_ansi(ansi)
    console = Console()
    out = []
    for offset, char in enumerate(text.plain):
        style = text.get_style_at_offset(console, offset)
        out.append((char, str(style.bgcolor) if char.isspace() else str(style)))
    return out


def below_blank(page: str) -> str:
    """Return typer's page without the blank line rich's padding draws above its usage
    line (octomem's pages start with the usage: ``octomem --help | head -1`` shows it)."""
    first, _, rest = page.partition("\n")
    assert not Text.from_ansi(first).plain.strip(), first
    return rest


def same_page(ours: Callable[[], None], theirs: Callable[[], None],
              monkeypatch: pytest.MonkeyPatch, typers: bool = True) -> None:
    """Assert both draw the same page; ``typers``: ``theirs`` is typer's renderer."""
    cut = below_blank if typers else (lambda page: page)
    for width in (80, 100):
        assert rendered(ours, monkeypatch, width, False) == cut(rendered(
            theirs, monkeypatch, width, False))
    assert styled(rendered(ours, monkeypatch, 100, True)) == styled(
        cut(rendered(theirs, monkeypatch, 100, True)))


def test_the_catalog_names_every_registered_command_with_its_own_summary() -> None:
    commands = registered()
    names = {info.name or typer.main.get_command_name(info.callback.__name__)  # type: ignore[union-attr]
             for info in lazy.registry.registered_commands}
    names |= {info.name for info in lazy.registry.registered_groups}
    assert [e.name for e in catalog.COMMANDS] == list(commands)
    assert set(commands) == names  # nothing registered that the catalog leaves out
    for entry in catalog.COMMANDS:
        command = commands[entry.name]
        assert entry.summary == helpview.summary(command.short_help or command.help), entry.name
    assert all(m.startswith("octomem.engine.cli.") and m.rsplit(".", 1)[1] in MODULES
               for m in (c.callback.__module__ for c in commands.values() if c.callback))


def test_the_top_level_page_is_typers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The catalog's page (no command loaded) = the lazy group's own = typer's over every
    command loaded: names, summaries, the group's options and help."""
    group = typer.main.get_command(app)
    ctx = group.context_class(group, info_name="octomem")
    ours = lambda: helpview.print_page(catalog.top_page())  # noqa: E731
    same_page(ours, lambda: group.format_help(ctx, None), monkeypatch, typers=False)
    assert not group.commands  # drawn from the catalog: nothing was built
    loaded = typer.main.get_command(app)
    loaded_ctx = loaded.context_class(loaded, info_name="octomem")
    same_page(ours, lambda: rich_utils.rich_format_help(obj=loaded, ctx=loaded_ctx,
                                                        markup_mode="markdown"), monkeypatch)


@pytest.mark.parametrize("path", [[entry.name] for entry in catalog.COMMANDS] + [["log", "tail"]])
def test_each_command_page_is_typers(path: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    group = typer.main.get_command(app)
    ctx = group.context_class(group, info_name="octomem")
    command: Any = group
    for name in path:
        command = command.get_command(ctx, name)
        ctx = command.context_class(command, info_name=name, parent=ctx)
    same_page(lambda: command.format_help(ctx, None),
              lambda: rich_utils.rich_format_help(obj=command, ctx=ctx, markup_mode="markdown"),
              monkeypatch)


def test_the_console_script_prints_the_same_page_without_typer() -> None:
    """``octomem --help`` (the catalog's page, no typer) prints what the typer path prints
    (``--debug --help`` goes through typer and the group)."""
    def run(*args: str) -> str:
        env = {**os.environ, "COLUMNS": "100"}
        code = "from octomem.engine.cli import main; import sys; sys.argv[0] = 'octomem'; main()"
        done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True,
                              text=True, env=env, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout

    fast, full = run("--help"), run("--debug", "--help")
    assert "ingest" in fast and "--show-completion" in fast
    assert fast == full
    # trial 14: `octomem --help | head -1` showed a line of spaces (rich's padding)
    assert fast.splitlines()[0].strip() == "Usage: octomem [OPTIONS] COMMAND [ARGS]..."
    assert run("search", "--help").splitlines()[0].strip() == \
        "Usage: octomem search [OPTIONS] QUERY"


#: Widths the rich-free page is compared at (its narrowest exact width is 64 columns).
WIDTHS = (64, 67, 72, 80, 91, 100, 120, 157, 200, 251)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_rich_free_page_is_richs(width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """:mod:`fasthelp` draws ``octomem --help`` as :mod:`helpview` (rich) does: the same
    characters without colour, the same style on every visible character with it."""
    page = catalog.top_page()
    lines = fasthelp.lines_of(page, width)
    assert all(len(line) == width for line in lines)
    plain = "".join(fasthelp.ansi(line, False) + "\n" for line in lines)
    assert plain == rendered(lambda: helpview.print_page(page), monkeypatch, width, False)
    coloured = "".join(fasthelp.ansi(line, True) + "\n" for line in lines)
    assert styled(coloured) == styled(
        rendered(lambda: helpview.print_page(page), monkeypatch, width, True))


def test_the_rich_free_page_declines_where_rich_would_shrink_names() -> None:
    with pytest.raises(fasthelp.Unsupported):
        fasthelp.lines_of(catalog.top_page(), 50)


class Stdout(io.StringIO):
    """A stdout that says whether it is a terminal, with an encoding."""

    def __init__(self, tty: bool, encoding: str = "utf-8") -> None:
        super().__init__()
        self.tty, self._encoding = tty, encoding

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._encoding

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(("env", "tty", "encoding", "expected"), [
    ({"COLUMNS": "123"}, False, "utf-8", (123, False)),
    ({"COLUMNS": "91", "TERM": "xterm-256color"}, True, "UTF-8", (91, True)),
    ({"COLUMNS": "91", "FORCE_COLOR": "1"}, False, "utf-8", None),
    ({"COLUMNS": "91", "NO_COLOR": "1"}, True, "utf-8", None),
    ({"COLUMNS": "91", "TERM": "dumb"}, True, "utf-8", None),
    ({"COLUMNS": "91", "TERMINAL_WIDTH": "70"}, False, "utf-8", None),
    ({"COLUMNS": "91"}, False, "ascii", None),
])
def test_the_rich_free_page_is_drawn_only_where_rich_would_draw_the_same(
        env: dict[str, str], tty: bool, encoding: str, expected: tuple[int, bool] | None,
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*fasthelp.RICH_VARIABLES, "NO_COLOR", "TERM", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out = Stdout(tty, encoding)
    monkeypatch.setattr(sys, "stdout", out)
    if expected is None:
        assert fasthelp.draw(catalog.top_page()) is False and out.getvalue() == ""
        return
    assert fasthelp.terminal() == expected
    assert fasthelp.draw(catalog.top_page())
    console = Console(file=io.StringIO(), width=expected[0], force_terminal=expected[1],
                      color_system="standard" if expected[1] else None,
                      theme=helpview.Theme(helpview.THEME), highlighter=helpview.highlighter)
    helpview.print_page(catalog.top_page(), console)
    assert styled(out.getvalue()) == styled(console.file.getvalue())  # type: ignore[attr-defined]


def test_at_a_real_terminal_the_page_matches_richs_in_colour() -> None:
    """``octomem --help`` in a pseudo-terminal (no rich) and ``octomem --debug --help``
    (typer and rich): the same characters in the same styles."""
    import pty

    def run(*args: str) -> str:
        leader, follower = pty.openpty()
        env = {k: v for k, v in os.environ.items()
               if k not in (*fasthelp.RICH_VARIABLES, "NO_COLOR")}
        env.update(COLUMNS="97", TERM="xterm-256color")
        code = "from octomem.engine.cli import main; import sys; sys.argv[0] = 'octomem'; main()"
        done = subprocess.Popen([sys.executable, "-c", code, *args], stdout=follower,
                                stderr=subprocess.DEVNULL, env=env)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the follower closed: all was read
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(leader)
        assert done.wait(timeout=60) == 0
        return b"".join(chunks).decode().replace("\r\n", "\n")

    fast, full = run("--help"), run("--debug", "--help")
    assert "\x1b[" in fast and "ingest" in fast  # coloured, the real page
    assert styled(fast) == styled(full)
