"""Building arms from settings: name lookup, options validation, compatibility checks."""

from __future__ import annotations

import difflib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from .arms import ARM_KINDS, PROTOCOLS, ArmContext, ArmKind, ArmSpec
from .errors import (
    ArmBuildError,
    ArmConfigError,
    ArmNotFoundError,
    IncompatibleArmsError,
    OctomemError,
    arm_not_found_in,
    config_error,
)
from .files import store_dir, write_gitignore
from .manager import ArmRegistry
from .settings import LoadedSettings, PipelineSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Arms:
    """The arms of one assembled pipeline; ``None`` where settings name none."""

    storage: Any
    keyword: Any | None
    embedder: Any | None
    semantic: Any | None
    reranker: Any | None
    dedup: Any | None


def arm_options(spec: ArmSpec, loaded: LoadedSettings) -> BaseModel:
    """Validate ``arms.<name>`` from the settings against the arm's options model.

    :raises ArmConfigError: names the setting (``arms.<name>.<field>``) and its layer.
    """
    raw = loaded.settings.arms.get(spec.name, {})
    try:
        return spec.options_model(**raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(["arms", spec.name, *(str(p) for p in err["loc"])])
        message = f"setting {key!r} from {loaded.source_of(key)}: {err['msg']}, " \
            f"got {err.get('input')!r}"
        if err["type"] == "extra_forbidden":
            known = list(spec.options_model.model_fields)
            close = difflib.get_close_matches(str(err["loc"][-1]), known, n=1)
            message = f"unknown setting {key!r} in {loaded.source_of(key)}" + (
                f"; did you mean 'arms.{spec.name}.{close[0]}'?" if close
                else f"; {spec.name} takes: {', '.join(known) or 'no options'}"
            )
        raise config_error(message, loaded.source_of(key)) from exc


def check_arm_settings(loaded: LoadedSettings, registry: ArmRegistry) -> None:
    """Validate every ``arms.<name>`` table, configured in the pipeline or not.

    An arm name that no installed arm has is an error (with the closest installed name),
    except that ``_`` stands for ``-``: environment variables cannot spell
    ``OCTOMEM_ARMS__SQLITE-VEC__SCAN``, so ``OCTOMEM_ARMS__SQLITE_VEC__SCAN`` sets
    ``arms.sqlite-vec.scan``.

    :raises ArmConfigError: an unknown arm name, or options its arm refuses.
    """
    specs: dict[str, list[ArmSpec]] = {}
    for kind in ARM_KINDS:
        for name in registry.names(kind):
            specs.setdefault(name, []).append(registry.get(kind, name))
    arms = loaded.settings.arms
    for name in list(arms):
        dashed = name.replace("_", "-")
        if name not in specs and dashed in specs:
            arms[dashed] = {**arms.pop(name), **arms.get(dashed, {})}
            prefix = f"arms.{name}"
            for key in [k for k in loaded.provenance if k.split(".")[:2] == prefix.split(".")]:
                loaded.provenance[f"arms.{dashed}{key[len(prefix):]}"] = loaded.provenance[key]
            name = dashed
        if name not in specs:
            close = difflib.get_close_matches(name, list(specs), n=1)
            key = f"arms.{name}"
            raise ArmConfigError(
                f"unknown arm {name!r} in {key!r} from {loaded.source_of(key)}; "
                + (f"did you mean 'arms.{close[0]}'?" if close
                   else f"installed arms: {', '.join(sorted(specs))}"))
        for spec in specs[name]:
            arm_options(spec, loaded)


def _specs(pipeline: PipelineSettings, registry: ArmRegistry) -> dict[ArmKind, ArmSpec]:
    specs: dict[ArmKind, ArmSpec] = {"storage": registry.get("storage", pipeline.storage)}
    for kind in ("keyword", "embedder", "semantic", "reranker", "dedup"):
        name = getattr(pipeline, kind)
        if name:
            specs[kind] = registry.get(kind, name)  # type: ignore[arg-type]
    return specs


def check_compatible(pipeline: PipelineSettings, registry: ArmRegistry,
                     source_of: Callable[[str], str] | None = None) -> dict[ArmKind, ArmSpec]:
    """Look every configured arm up and refuse impossible combinations before building any.

    :param source_of: names the layer that set a key (:meth:`LoadedSettings.source_of`):
        an unknown arm's error then names its setting and that layer, and is a usage
        error when a command-line option set it (:func:`~.errors.arm_not_found_in`).
    :returns: the spec of each configured arm kind.
    :raises ArmNotFoundError: a configured name is not installed (lists what is).
    :raises IncompatibleArmsError: e.g. ``fts5`` with a non-SQLite storage, or a semantic
        arm without an embedder; the message names both arms.
    """
    try:
        specs = _specs(pipeline, registry)
    except ArmNotFoundError as exc:
        if source_of is None:
            raise
        raise arm_not_found_in(exc, source_of(f"pipeline.{exc.kind}")) from None
    storage = pipeline.storage
    for kind, spec in specs.items():
        if spec.requires_storage and storage not in spec.requires_storage:
            needs = " or ".join(repr(s) for s in sorted(spec.requires_storage))
            raise IncompatibleArmsError(
                f"{kind} arm {spec.name!r} needs storage {needs}, but pipeline.storage is "
                f"{storage!r}; choose another {kind} arm or storage"
            )
    if "semantic" in specs and "embedder" not in specs:
        raise IncompatibleArmsError(
            f"semantic arm {pipeline.semantic!r} needs an embedder, but pipeline.embedder is "
            "empty; set pipeline.embedder (e.g. fastembed) or pipeline.semantic to empty"
        )
    return specs


def _build(spec: ArmSpec, loaded: LoadedSettings, context: ArmContext) -> Any:
    options = arm_options(spec, loaded)
    try:
        arm = spec.factory(options, context)
    except OctomemError:
        raise
    except Exception as exc:  # a plugin's own failure: report it by arm name
        raise ArmBuildError(spec.kind, spec.name, f"{type(exc).__name__}: {exc}") from exc
    protocol = PROTOCOLS[spec.kind]
    if not isinstance(arm, protocol):
        raise ArmBuildError(
            spec.kind, spec.name, f"{type(arm).__name__} does not implement {protocol.__name__}"
        )
    return arm


def store_exists(loaded: LoadedSettings, registry: ArmRegistry, root: Path) -> bool:
    """Return whether the configured storage has a store at ``root``, creating nothing.

    Asks the storage spec's ``store_exists`` probe; without one, whether ``root`` is a
    folder (:func:`build_arms` creates it when it opens a store).

    :raises OctomemError: the probe failed (e.g. a server that cannot be reached).
    """
    spec = _specs(loaded.settings.pipeline, registry)["storage"]
    if spec.store_exists is None:
        return Path(root).is_dir()
    try:
        return bool(spec.store_exists(arm_options(spec, loaded), Path(root)))
    except OctomemError:
        raise
    except Exception as exc:  # a plugin's own failure: report it by arm name
        raise ArmBuildError("storage", spec.name, f"{type(exc).__name__}: {exc}") from exc


def build_embedder(loaded: LoadedSettings, registry: ArmRegistry, root: Path) -> Any:
    """Build the configured embedder alone, on no storage (``None`` without one): what a
    process loads its model from before any scope's store exists.

    :raises OctomemError: the embedder's :class:`ArmConfigError` or build failure.
    """
    spec = _specs(loaded.settings.pipeline, registry).get("embedder")
    return None if spec is None else _build(spec, loaded, ArmContext(root=root))


#: The ``meta`` key saying that a store's folder got its ``.gitignore`` (trial 20 L1): a
#: folder made before octomem wrote one (December 3) gets it when a later octomem opens
#: it, once; a ``.gitignore`` deleted after that stays deleted.
GITIGNORE_KEY = "gitignore_written"


def _gitignore_once(root: Path, storage: Any, created: bool) -> None:
    """Record that a new store's folder got its ``.gitignore``
    (:func:`~octomem.engine.files.store_dir`; a folder the user made, empty, is left
    without one, as before), or give the folder of an older store without one the same
    file, once per store (:data:`GITIGNORE_KEY` in the storage's ``meta``).

    :param created: the folder was missing or empty before the storage opened it: the
        store begins now. Otherwise nothing is written while the folder holds its
        ``.gitignore``, so opening a store takes no write lock (a store made between
        December 3 and 4 gets the key when its ``.gitignore`` is first missing). A storage
        without ``get_meta`` / ``set_meta``, or one that cannot be written (read-only), is
        left alone."""
    get, put = getattr(storage, "get_meta", None), getattr(storage, "set_meta", None)
    if get is None or put is None or get(GITIGNORE_KEY) is not None:
        return
    if not created:
        if not write_gitignore(root):
            return  # it exists (or cannot be written)
        log.warning("%s: wrote .gitignore ('*') so that git leaves this memory out, as it "
                    "does a new store's folder; delete it to commit the memory on purpose",
                    root)
    try:
        with storage.transaction() as tx:
            put(tx, GITIGNORE_KEY, "1")
    except OctomemError:
        pass


def build_arms(loaded: LoadedSettings, registry: ArmRegistry, root: Path) -> Arms:
    """Check the configured combination, then build storage first and the other arms on it.

    :param root: directory for this scope's files; created if missing, with a
        ``.gitignore`` holding ``*`` (:func:`~octomem.engine.files.store_dir`).
    :raises OctomemError: any of :func:`check_compatible`'s errors, or an arm's
        :class:`ArmConfigError` / :class:`PluginLoadError`.
    """
    specs = check_compatible(loaded.settings.pipeline, registry, loaded.source_of)
    check_arm_settings(loaded, registry)
    folder = Path(root)
    created = not folder.exists() or next(folder.iterdir(), None) is None  # a store begins
    store_dir(root)
    storage = _build(specs["storage"], loaded, ArmContext(root=root))
    _gitignore_once(folder, storage, created)
    context = ArmContext(root=root, storage=storage)
    built: dict[str, Any] = {}
    for kind in ARM_KINDS[1:]:  # in order: the embedder before the arms that use it
        if kind in specs:
            built[kind] = _build(specs[kind], loaded, context)
            if kind == "embedder":
                context = ArmContext(root=root, storage=storage, embedder=built[kind])
    return Arms(
        storage=storage,
        keyword=built.get("keyword"),
        embedder=built.get("embedder"),
        semantic=built.get("semantic"),
        reranker=built.get("reranker"),
        dedup=built.get("dedup"),
    )
