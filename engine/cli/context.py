"""What every command shares, without typer: the global options' values (:data:`state`),
the output consoles, and the memory those options name.

The typer group's callback (:mod:`.commands`) and the quick path of ``octomem search``
(:mod:`.quick`) both fill :data:`state` through :func:`apply_globals`, so a command reads
the same values whichever parsed its command line.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..overrides import Overrides
from .layout import SafeConsole

if TYPE_CHECKING:
    from ..memory.facade import Memory

console = SafeConsole()
err = SafeConsole(stderr=True, soft_wrap=True)


class _State:
    config: Path | None = None
    overrides: Overrides = Overrides()
    debug: bool = False
    project_root: Path | None = None
    global_root: Path | None = None


state = _State()


def apply_globals(config: Path | None, set_: list[str] | None, data_dir: Path | None,
                  project_root: Path | None, global_root: Path | None, debug: bool) -> None:
    """Read the global options every command shares into :data:`state`.

    :raises OctomemError: a ``--set`` that is not ``key=value`` or names no setting.
    :raises UsageValueError: ``--project-root`` is not a folder.
    """
    state.config = config
    if set_:  # pydantic comes with the settings: only when something is set
        from ..settings import parse_overrides

        state.overrides = Overrides(parse_overrides(set_))
    else:
        state.overrides = Overrides()
    if data_dir is not None:
        state.overrides.put("data_dir", str(data_dir), "--data-dir")
        if global_root is None:  # typed on the command line, it beats a global_root from
            # the environment or a config file (trial 17 G1: the quick start's demo went
            # into the user's real global memory while OCTOMEM_GLOBAL_ROOT was set)
            state.overrides.put("global_root", str(data_dir), "--data-dir")
    if global_root is not None:  # shown by `config` with its source
        state.overrides.put("global_root", str(global_root), "--global-root")
    if project_root is not None:  # every command: a typo must not start a new memory
        from ..files import check_project_root

        check_project_root(project_root)
    state.project_root, state.global_root = project_root, global_root
    state.debug = debug


def command_memory() -> Memory:
    """Open the memory the global options name (both scopes)."""
    from ..memory.facade import open_memory

    return open_memory(state.config, state.overrides, state.project_root, state.global_root)


def note_project(memory: Memory, scope: str | None) -> None:
    """Say on stderr which project a write into the local scope goes to when that project
    was found above the current folder (no ``--project-root``): the user sees that it went
    to ``proj/.octomem/``, not to a new memory in ``proj/src/``."""
    if state.project_root is not None or scope not in (None, "local"):
        return
    here = Path.cwd().resolve()
    if memory.roots.project != here:
        from ..project import found_by

        err.print(f"note: the local scope is {memory.roots.local} (the nearest folder above "
                  f"{here} that holds {found_by(memory.roots.project)})", highlight=False,
                  markup=False)
