"""Settings: defaults < user config < project config < ``--config`` < ``OCTOMEM_*`` < ``--set``.

Each later layer wins per key. Every effective value remembers the layer it came
from (:attr:`LoadedSettings.provenance`), and an unknown key is an error naming the
key, the layer and the closest known key.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs
from pydantic import BaseModel, ValidationError

from .errors import ArmConfigError, OptionValueError, config_error
from .project import find_project_root, project_config_path
from .settings_env import env_layer, variable_of
from .settings_schema import (  # noqa: F401 (the settings' model: this module's API)
    ARM_KIND_GROUPS,
    GROUPS,
    IngestSettings,
    LimitsSettings,
    PipelineSettings,
    RetrievalSettings,
    SessionStartSettings,
    Settings,
    setting_field,
    setting_group,
)

ENV_PREFIX = "OCTOMEM_"
#: Settings a project's own ``.octomem/config.toml`` may not set: which files the MCP
#: ``ingest`` tool may read, and where the memories live. That file comes with the
#: repository (``git clone`` brings a committed ``.octomem/``), so its author would
#: decide what an agent in your session may read into memory (trial 18 H8: a cloned
#: repository's ``allowed_roots = ["/"]`` let the agent ingest the user's private
#: files). Honoured from the user's config, ``--config``, the environment and ``--set``.
PROJECT_UNTRUSTED = ("ingest.allowed_roots", "data_dir", "global_root")

log = logging.getLogger(__name__)
_WARNED: set[tuple[Path, str]] = set()  # (project config, key): said once a process


@dataclass(frozen=True, slots=True)
class LoadedSettings:
    """Effective settings and the layer each set key came from (dotted key -> layer)."""

    settings: Settings
    provenance: dict[str, str]

    def source_of(self, dotted_key: str) -> str:
        """Return the layer that set ``dotted_key``, a key above it, or else a key below
        it (``arms.fts`` for ``--set arms.fts.in_ram=...``); ``"default"`` when none did."""
        parts = dotted_key.split(".")
        for i in range(len(parts), 0, -1):
            layer = self.provenance.get(".".join(parts[:i]))
            if layer:
                return layer
        below = [layer for key, layer in self.provenance.items()
                 if key.startswith(dotted_key + ".") and layer]
        return below[-1] if below else "default"


def _trusted(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """Return a project config's settings without :data:`PROJECT_UNTRUSTED`, warning (on
    the ``octomem.engine.settings`` logger: stderr) for each one the file sets."""
    for key in PROJECT_UNTRUSTED:
        *groups, name = key.split(".")
        table: Any = data
        for group in groups:
            table = table.get(group) if isinstance(table, dict) else None
        if isinstance(table, dict) and name in table:
            del table[name]
            if (path, key) in _WARNED:
                continue
            _WARNED.add((path, key))
            log.warning("%s sets %s: ignored (a project's own config may not; put it in %s "
                        "if you mean it)", path, key, user_config_path())
    return data


def user_config_path() -> Path:
    """Return ``~/.config/octomem/config.toml`` (the platform's user config dir)."""
    return platformdirs.user_config_path("octomem") / "config.toml"


def _read_toml(path: Path, layer: str) -> dict[str, Any]:
    """Return the settings file ``path`` as a dict (UTF-8; a leading byte-order mark, as
    Windows editors write, is dropped).

    :raises ArmConfigError: not UTF-8 (the byte and its offset named), or not TOML.
    :raises OptionValueError: ``--config`` names no file.
    """
    import tomllib  # only when a file is read: ~15 ms of a search's start at load 12 (issue 15)
    try:
        return tomllib.loads(path.read_bytes().decode("utf-8-sig"))
    except UnicodeDecodeError as exc:  # trial 15 F8: a Latin-1 comment, a UTF-16 file
        bad = exc.object[exc.start:exc.start + 1].hex()
        raise ArmConfigError(f"{layer} {path}: not UTF-8 text (byte 0x{bad} at offset "
                             f"{exc.start}); save it as UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise ArmConfigError(f"{layer} {path}: not valid TOML: {exc}") from exc
    except OSError as exc:  # --config naming a file that is not there: a usage error
        missing = isinstance(exc, FileNotFoundError) and layer == "--config"
        raise (OptionValueError if missing else ArmConfigError)(
            f"{layer} {path}: cannot be read: {exc.strerror or exc}") from exc


def _parse_value(raw: str) -> Any:
    """Read a ``--set`` value as TOML (numbers, booleans, lists, quoted strings), else a string."""
    import tomllib
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """Turn ``["retrieval.rrf_k=40", ...]`` into a nested dict.

    :raises ArmConfigError: an item has no ``=``.
    """
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise OptionValueError(f"--set {pair!r}: expected key=value, e.g. "
                                   "retrieval.top_k=5")
        node = out
        *parents, leaf = key.strip().split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = _parse_value(raw.strip())
    return out


def _check_keys(data: dict[str, Any], model: type[BaseModel], layer: str, prefix: str = "") -> None:
    """Raise naming the key, the layer and the closest known key for any unknown key."""
    fields = model.model_fields
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if key not in fields:
            import difflib  # only to suggest a name
            close = difflib.get_close_matches(key, list(fields), n=1)
            hint = f"; did you mean '{prefix}{close[0]}'?" if close else ""
            raise config_error(f"unknown setting {dotted!r} in {layer}{hint}", layer)
        annotation = fields[key].annotation
        if (isinstance(value, dict) and isinstance(annotation, type)
                and issubclass(annotation, BaseModel)):
            _check_keys(value, annotation, layer, f"{dotted}.")


def _merge(into: dict[str, Any], layer: dict[str, Any], name: str, prov: dict[str, str],
           prefix: str = "") -> None:
    """Deep-merge ``layer`` into ``into``, recording ``name`` as the source of each leaf."""
    for key, value in layer.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict) and key != "weights":
            if not isinstance(into.get(key), dict):
                into[key] = {}
            _merge(into[key], value, name, prov, f"{dotted}.")
        else:
            into[key] = value
            prov[dotted] = name


def load_settings(
    config_file: Path | None = None,
    overrides: dict[str, Any] | None = None,
    *,
    project_root: Path | None = None,
    read_user_config: bool = True,
) -> LoadedSettings:
    """Read every layer and return the effective settings with their provenance.

    Layers, each later one winning per key: packaged defaults < user config
    (:func:`user_config_path`) < project config (:func:`project_config_path`) <
    ``config_file`` < ``OCTOMEM_*`` environment variables < ``overrides``.

    :param config_file: the ``--config FILE`` layer.
    :param project_root: the project whose ``.octomem/config.toml`` is read (default:
        :func:`~.project.find_project_root`, from the current directory upward).
    :param overrides: the ``--set`` layer, nested (see :func:`parse_overrides`); an
        :class:`~.overrides.Overrides` names the option that set each of its keys.
    :raises ArmConfigError: an unknown key, a bad value or an unreadable file; the
        message names the key and the layer.
    """
    layers: list[tuple[str, dict[str, Any]]] = []
    user = user_config_path()
    if read_user_config and user.is_file():
        layers.append((f"user config ({user})", _read_toml(user, "user config")))
    project = project_config_path(project_root or find_project_root())
    if project.is_file():
        layers.append((f"project config ({project})",
                       _trusted(_read_toml(project, "project config"), project)))
    if config_file is not None:
        layers.append((f"--config ({config_file})", _read_toml(config_file, "--config")))
    layers.append(("environment", env_layer(Settings, ENV_PREFIX)))
    layers.append(("--set", overrides or {}))
    merged: dict[str, Any] = {}
    provenance: dict[str, str] = {}
    for name, data in layers:
        _check_keys(data, Settings, name)
        _merge(merged, data, name, provenance)
    for key, option in getattr(overrides, "labels", {}).items():  # e.g. --data-dir
        if provenance.get(key) == "--set":
            provenance[key] = option
    try:
        settings = Settings(**merged)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"])
        layer = LoadedSettings(Settings.model_construct(), provenance).source_of(key)
        variable = variable_of(key, ENV_PREFIX) if layer == "environment" else None
        if variable is not None:  # name what the user typed, as the JSON check does
            raise config_error(f"environment variable {variable}={os.environ[variable][:60]!r} "
                               f"(setting {key!r}): {err['msg']}", layer) from exc
        raise config_error(f"setting {key!r} from {layer}: {err['msg']}", layer) from exc
    return LoadedSettings(settings, provenance)
