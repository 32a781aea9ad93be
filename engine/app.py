"""One call that every front end makes first: read settings, load plugins, assemble."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .manager import load_registry
from .memory import Memory
from .pipeline import Pipeline
from .settings import load_settings


def open_pipeline(
    config_file: Path | None = None,
    overrides: dict[str, Any] | None = None,
    root: Path | None = None,
) -> Pipeline:
    """Read settings (all layers), load installed plugins, assemble the pipeline.

    :param config_file: the ``--config FILE`` layer.
    :param overrides: the ``--set`` layer, nested.
    :param root: the scope directory (default: ``settings.data_dir``).
    :raises OctomemError: bad settings, missing or incompatible arms, plugin failures.
    """
    loaded = load_settings(config_file, overrides)
    return Pipeline(loaded, load_registry(), root)


def open_memory(
    config_file: Path | None = None,
    overrides: dict[str, Any] | None = None,
    project_root: Path | None = None,
    global_root: Path | None = None,
) -> Memory:
    """Read settings (the project's config layer included), load plugins, open both scopes.

    :param project_root: the project whose ``.octomem/`` is the local scope (default: cwd).
    :param global_root: the global scope's directory (default: setting ``global_root``,
        else ``data_dir``).
    :raises OctomemError: bad settings, missing or incompatible arms, plugin failures.
    """
    loaded = load_settings(config_file, overrides, project_root=project_root)
    return Memory(loaded, load_registry(), project_root, global_root)
