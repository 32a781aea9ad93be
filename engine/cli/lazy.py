"""The ``octomem`` group, whose commands load one by one, when asked for.

Command modules register their commands on :data:`registry` (a typer app that is never
run itself). The group lists them from :mod:`.catalog` (names and summaries), and only a
command that runs, or whose own ``--help`` is asked, has its module imported and its
signature read by typer: building all nineteen with typer's ``get_command`` took ~0.1 s of
every start, and their modules' imports more (``benchmarks/results/startup/cli-help.md``).
Shell completion, which lists every command with its help, loads them all.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
from typing import Any

import typer
import typer.main

from . import catalog
from .options import Group
from .usage import UsageError

#: Where command modules register their commands (``@registry.command(cls=Command)``) and
#: groups (``registry.add_typer(...)``); :class:`LazyGroup` builds them from here.
registry = typer.Typer(add_completion=False)


def build(name: str, group: Group) -> Any | None:
    """Import the module registering command ``name`` and build its click command
    (``None``: no such command), with ``group``'s markup mode.

    :raises ImportError: the module cannot be imported.
    """
    entry = catalog.BY_NAME.get(name)
    if entry is None:
        return None
    importlib.import_module(f"{__package__}.{entry.module}")
    shared = {"pretty_exceptions_short": True, "rich_markup_mode": group.rich_markup_mode,
              "suggest_commands": True}
    for info in registry.registered_commands:
        if info.callback and (info.name or typer.main.get_command_name(
                info.callback.__name__)) == name:
            return typer.main.get_command_from_info(
                info, **_accepted(typer.main.get_command_from_info, shared))
    for group_info in registry.registered_groups:
        if group_info.name == name:
            return typer.main.get_group_from_info(
                group_info, **_accepted(typer.main.get_group_from_info, shared))
    return None


def _accepted(function: Any, options: dict[str, Any]) -> dict[str, Any]:
    """Return the ``options`` that ``function`` takes (typer's keywords vary by version)."""
    taken = inspect.signature(function).parameters
    return {key: value for key, value in options.items() if key in taken}


class LazyGroup(Group):
    """The ``octomem`` group: commands listed from :mod:`.catalog`, built when first used;
    its help is drawn from the catalog, no command loaded."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.suggest_commands = False  # typer's suggestions see loaded commands only

    def list_commands(self, ctx: Any) -> list[str]:
        """Return every command's name: the catalog's, then any added directly."""
        names = [entry.name for entry in catalog.COMMANDS]
        return names + [name for name in self.commands if name not in catalog.BY_NAME]

    def get_command(self, ctx: Any, cmd_name: str) -> Any | None:
        """Return the command ``cmd_name``, importing and building it on first use."""
        if cmd_name not in self.commands:
            command = build(cmd_name, self)
            if command is None:
                return None
            self.commands[cmd_name] = command
        return self.commands[cmd_name]

    def command_rows(self, ctx: Any) -> list[tuple[str, str]]:
        """Return ``(name, summary)`` per command: the catalog's, then any added."""
        extra = [(name, cmd.short_help or cmd.help or "") for name, cmd in self.commands.items()
                 if name not in catalog.BY_NAME and not cmd.hidden]
        return catalog.command_rows() + extra

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """Resolve the command named first in ``args``; an unknown one is a usage error
        suggesting the closest names (``Did you mean 'search'?``).

        :raises UsageError: no such command.
        """
        try:
            return super().resolve_command(ctx, args)
        except UsageError as exc:
            close = difflib.get_close_matches(args[0], self.list_commands(ctx)) if args else []
            if close:
                message = exc.message.rstrip(".")  # type: ignore[attr-defined]
                exc.message = f"{message}. Did you mean {', '.join(map(repr, close))}?"  # type: ignore[attr-defined]
            raise
