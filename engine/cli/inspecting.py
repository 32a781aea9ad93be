"""The commands that show what is installed and configured: ``octomem plugins``,
``octomem status`` and ``octomem config`` (each also as one JSON object: :mod:`.machine`).
They read the settings, the installed plugins and the stores' counts; none embeds."""

from __future__ import annotations

from typing import Annotated

import typer

from . import options as opt
from .commands import _memory, console, state
from .entry import close_memory
from .lazy import registry
from .options import Command


@registry.command(cls=Command)
def plugins(as_json: opt.MachineOpt = False) -> None:
    """List installed arms by kind: name, providing distribution, version."""
    from ..manager import load_registry
    from . import machine, render

    registry = load_registry()
    machine.dump(machine.plugins_json(registry)) if as_json else render.plugins(console, registry)


@registry.command(cls=Command)
def status(as_json: opt.MachineOpt = False) -> None:
    """Show both scopes: where they live, counts, arms, the embedder model, semantic
    availability; exit status 1 when a scope's store cannot be read (its file is named)."""
    from . import machine
    from . import memory as show

    memory = _memory()
    try:
        info = memory.status(load_model=True)
        if as_json:
            machine.dump(machine.status_json(info))
        else:
            show.status(console, info, searched_up=state.project_root is None)
    finally:
        close_memory(memory)
    if any(scope.get("unreadable") for scope in info["scopes"].values()):
        raise typer.Exit(1)  # shown above: which file, what is wrong, what to do


@registry.command(cls=Command)
def config(
    key: Annotated[str | None, typer.Argument(help=(
        "One setting (`retrieval.top_k`) or a section (`retrieval`); default: all."))] = None,
    as_json: opt.MachineOpt = False,
) -> None:
    """Print every effective setting (configured arms' options included), or the one
    named, with its cost group (identity: needs re-indexing; runtime; retrieval: reorders
    answers), the layer it came from and what it means."""
    from ..assembly import arm_options, check_arm_settings, check_compatible
    from ..manager import load_registry
    from ..settings import load_settings
    from . import render
    from .config_key import chosen_rows

    loaded = load_settings(state.config, state.overrides, project_root=state.project_root)
    registry = load_registry()
    specs = check_compatible(loaded.settings.pipeline, registry, loaded.source_of)
    check_arm_settings(loaded, registry)
    options = {spec.name: arm_options(spec, loaded).model_dump(mode="json")
               for spec in specs.values()}
    by_name = {spec.name: spec for spec in specs.values()}
    rows = chosen_rows(render.setting_rows(loaded, options), key)
    if as_json:
        from . import machine

        machine.dump(machine.config_json(rows, loaded, by_name))
        return
    render.settings(console, loaded, rows, by_name)
