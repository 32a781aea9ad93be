"""One call that every pipeline user makes first: read settings, load plugins, assemble.

The memory domain's counterpart, over both scopes, is
:func:`octomem.engine.memory.facade.open_memory`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .manager import load_registry
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
