"""Plugin loading: entry points in group ``octomem`` -> a typed registry of arm specs."""

from __future__ import annotations

import importlib.metadata as md
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import pluggy

from . import hookspecs
from .arms import ARM_KINDS, ArmKind, ArmSpec
from .errors import ArmNotFoundError, DuplicateArmError, PluginLoadError

ENTRY_POINT_GROUP = "octomem"


@dataclass(frozen=True, slots=True)
class Provided:
    """An arm spec and who provides it.

    :param plugin: the pluggy plugin name (entry point name for installed plugins).
    :param distribution: distribution name, or ``"(registered in process)"``.
    :param version: distribution version, or ``""``.
    """

    spec: ArmSpec
    plugin: str
    distribution: str
    version: str


def new_plugin_manager() -> pluggy.PluginManager:
    """Return a plugin manager with octomem's hookspecs and no plugins."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    return pm


def load_entry_points(pm: pluggy.PluginManager) -> dict[str, tuple[str, str]]:
    """Import and register every entry point of group ``octomem``, then check hook names.

    Two distributions may declare the same entry point name (``toy = "plug_a"``,
    ``toy = "plug_b"``): both are loaded, the later one's plugin named
    ``NAME:DISTRIBUTION`` (pluggy's own loader keeps the first and skips the other without
    a word, so an installed plugin's arms were missing: trial 19 K9). Their arms then
    clash only when their names do (:class:`~.errors.DuplicateArmError`, both named).

    :returns: plugin name -> (distribution name, version).

    :raises PluginLoadError: an entry point failed to import or to register; names the
        entry point and its distribution, chained from the original error.
    """
    dists: dict[str, tuple[str, str]] = {}
    # a distribution's name and version, its metadata read once (each `.name`/`.version`
    # parses the whole METADATA file: 24 parses were ~20 ms of a fresh search's start)
    named: dict[int, tuple[str, str]] = {}
    for ep in md.entry_points(group=ENTRY_POINT_GROUP):
        if pm.is_blocked(ep.name) or (pm.get_plugin(ep.name) is not None
                                      and ep.name not in dists):
            continue  # blocked, or registered in process under this name
        if ep.dist is not None and id(ep.dist) not in named:
            meta = ep.dist.metadata
            named[id(ep.dist)] = (meta["Name"], meta["Version"])
        dist, version = named[id(ep.dist)] if ep.dist is not None else ("?", "")
        name = ep.name if ep.name not in dists else f"{ep.name}:{dist}"
        try:
            plugin = ep.load()
            if pm.get_name(plugin) is not None:
                continue  # the same module under another name: its hooks are in already
            pm.register(plugin, name=name)
        except Exception as exc:  # any import-time failure is the plugin's, report it by name
            raise PluginLoadError(name, dist, f"{type(exc).__name__}: {exc}") from exc
        dists[name] = (dist, version)
    pm.check_pending()
    return dists


class ArmRegistry:
    """Every arm the loaded plugins offer, by kind and name (the typed facade over pluggy)."""

    def __init__(
        self, pm: pluggy.PluginManager, dists: dict[str, tuple[str, str]] | None = None
    ) -> None:
        self.pm = pm
        self._arms: dict[ArmKind, dict[str, Provided]] = {k: {} for k in ARM_KINDS}
        dists = dists or {}
        for kind in ARM_KINDS:
            hook = getattr(pm.hook, hookspecs.HOOK_BY_KIND[kind])
            for impl in hook.get_hookimpls():
                plugin_name = pm.get_name(impl.plugin) or repr(impl.plugin)
                dist, version = dists.get(plugin_name, ("(registered in process)", ""))
                for spec in impl.function() or []:
                    self._add(kind, Provided(spec, plugin_name, dist, version))

    def _add(self, kind: ArmKind, provided: Provided) -> None:
        spec = provided.spec
        if spec.kind != kind:
            raise PluginLoadError(
                provided.plugin, provided.distribution,
                f"returned a {spec.kind!r} spec named {spec.name!r} from the {kind} hook",
            )
        existing = self._arms[kind].get(spec.name)
        if existing is not None:
            raise DuplicateArmError(
                kind, spec.name,
                f"{existing.plugin} ({existing.distribution})",
                f"{provided.plugin} ({provided.distribution})",
            )
        self._arms[kind][spec.name] = provided

    def get(self, kind: ArmKind, name: str) -> ArmSpec:
        """Return the spec of arm ``name`` of ``kind``.

        :raises ArmNotFoundError: no such arm; the message lists the installed names.
        """
        try:
            return self._arms[kind][name].spec
        except KeyError:
            raise ArmNotFoundError(kind, name, list(self._arms[kind])) from None

    def names(self, kind: ArmKind) -> list[str]:
        """Return the names of the arms of ``kind``, sorted."""
        return sorted(self._arms[kind])

    def provided(self, kind: ArmKind) -> list[Provided]:
        """Return every arm of ``kind`` with its provider, sorted by name."""
        return [self._arms[kind][n] for n in self.names(kind)]


def load_registry(extra_plugins: list[ModuleType | Any] | None = None) -> ArmRegistry:
    """Load installed plugins (plus ``extra_plugins``, registered in process) into a registry.

    :raises PluginLoadError: see :func:`load_entry_points`.
    :raises DuplicateArmError: two plugins register the same kind and name.
    """
    pm = new_plugin_manager()
    dists = load_entry_points(pm)
    for plugin in extra_plugins or []:
        pm.register(plugin)
    pm.check_pending()
    return ArmRegistry(pm, dists)
