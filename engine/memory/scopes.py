"""Memory scopes: where ``local`` and ``global`` live, and one pipeline per scope.

- ``local``: the project's memory, ``<project root>/.octomem/``; it travels with the
  project and no other project reads it. Opened when that folder exists, created by
  the first write; a read never creates it.
- ``global``: the account's memory, ``global_root`` (setting, ``--global-root``,
  ``OCTOMEM_GLOBAL_ROOT``), by default ``data_dir`` (the user data directory). Like
  ``local``, created by the first write into it; a read never creates it.

A scope exists when its store does (the storage's ``store_exists`` probe: for ``sqlite``
its file; without a probe, the scope's folder). Reads skip a scope that does not exist,
so asking a fresh install anything creates no file and no schema. The shared embedder
is built on its own when no scope exists yet (:meth:`ScopeSet.shared_arm`), so a server
still loads its model at start-up.

Both scopes use the same storage kind and arm settings. Their pipelines share one
embedder, reranker and dedup instance, so a model is loaded once per process.

A scope whose store cannot be read (a damaged file: :class:`~..errors.StoreUnreadableError`)
does not take the other one down: reads over both scopes skip it and name it
(:attr:`ScopeSet.unreadable`); asking for that scope alone, or writing to it, is that
error. Its file is left as it is.

A scope whose store file was deleted (``rm -rf .octomem``, ``git clean -fdx``) or replaced
while it was open is closed on the next call that asks for it, with every in-RAM copy of
the old file (postings, vectors, filter index): reads see the scope as not created (or
the file now at its path), and the next write creates a fresh store there, as the first
write into a new project does. A storage says so through an optional ``gone()`` method
(one ``os.stat``); one without it is never reopened.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

from ..assembly import build_embedder, check_arm_settings, check_compatible, store_exists
from ..embedding_lock import LOCK_NAME
from ..errors import InvalidQueryError, OctomemError, StoreUnreadableError
from ..files import remove_store_dir
from ..manager import ArmRegistry
from ..pipeline import Pipeline
from ..project import PROJECT_DIR, find_project_root
from ..settings import LoadedSettings, Settings
from .recency import DEFAULT_HALF_LIFE_DAYS, DEFAULT_WEIGHT

log = logging.getLogger(__name__)
ScopeName = Literal["local", "global"]
#: Every scope, in the order they are searched and locked (local first, then global).
SCOPES: tuple[ScopeName, ...] = ("local", "global")
#: The folder inside a project that holds its local memory (and its config.toml).
LOCAL_DIR = PROJECT_DIR
#: Default cosine at or above which ``remember`` reports an existing statement as a near
#: duplicate. all-MiniLM-L6-v2: copies differing in punctuation 0.99, a prefixed copy 0.94,
#: a paraphrase ("prefers dark mode" / "likes a dark theme") 0.79.
DEFAULT_DUPLICATE_THRESHOLD = 0.85


def check_scope(value: str | None, argument: str = "scope") -> ScopeName | None:
    """Return ``value`` as a scope name (``None`` stays ``None``: both / the default).

    :raises InvalidQueryError: naming ``argument`` when it is not ``local`` or ``global``.
    """
    if value is None:
        return None
    if value not in SCOPES:
        raise InvalidQueryError(f"{argument}: must be 'local' or 'global', got {value!r}")
    return value  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class MemoryKnobs:
    """The memory settings, read with their defaults when a settings model lacks them.

    :param duplicate_threshold: cosine for ``remember``'s near duplicates, in (0, 1].
    :param recency_weight: largest recency bonus, fraction of the fused score (<= 0.1).
    :param recency_half_life_days: days after which the bonus halves.
    """

    duplicate_threshold: float = DEFAULT_DUPLICATE_THRESHOLD
    recency_weight: float = DEFAULT_WEIGHT
    recency_half_life_days: float = DEFAULT_HALF_LIFE_DAYS


def memory_knobs(settings: Settings) -> MemoryKnobs:
    """Return the memory settings from ``settings.retrieval`` (defaults where absent)."""
    retrieval = settings.retrieval
    return MemoryKnobs(
        duplicate_threshold=getattr(retrieval, "duplicate_threshold", DEFAULT_DUPLICATE_THRESHOLD),
        recency_weight=getattr(retrieval, "recency_weight", DEFAULT_WEIGHT),
        recency_half_life_days=getattr(retrieval, "recency_half_life_days", DEFAULT_HALF_LIFE_DAYS),
    )


@dataclass(frozen=True, slots=True)
class ScopeRoots:
    """The directories of both scopes and the project they belong to (absolute paths)."""

    project: Path
    local: Path
    global_: Path

    def of(self, scope: ScopeName) -> Path:
        """Return the directory of ``scope``."""
        return self.local if scope == "local" else self.global_


def scope_roots(
    settings: Settings, project_root: Path | None = None, global_root: Path | None = None
) -> ScopeRoots:
    """Resolve both scope directories.

    :param project_root: the project (default: the nearest folder from the current one
        upward holding ``.octomem/``, or with none ``.git``, else the current one:
        :func:`~..project.find_project_root`).
    :param global_root: overrides the ``global_root`` setting (default: ``data_dir``).
    :raises OctomemError: the global scope's path is a file; names the setting.
    :raises OctomemError: the global scope's folder is the project's ``.octomem/``.
    """
    project = (Path(project_root).expanduser().resolve() if project_root is not None
               else find_project_root())
    setting = getattr(settings, "global_root", None)
    configured = global_root or setting or settings.data_dir
    root = Path(configured).expanduser().resolve()
    named = ("global_root (--global-root, OCTOMEM_GLOBAL_ROOT or the config file)"
             if global_root or setting else
             "data_dir (--data-dir, OCTOMEM_DATA_DIR or the config file)")
    if root.exists() and not root.is_dir():
        raise OctomemError(f"{named}: {root} is a file, not a folder; the global scope "
                           "keeps its store in a folder: point the setting at one")
    if (project / LOCAL_DIR).resolve() == root:  # one store as two scopes (trial 16 F24)
        raise OctomemError(
            f"{named}: {root} is the local scope of the project {project} too, so both "
            "scopes would be one store (every statement found twice, forget refused); point "
            "the global scope at another folder, or use another project folder")
    return ScopeRoots(project, project / LOCAL_DIR, root)


def cannot_create(scope: ScopeName, exc: PermissionError) -> OctomemError:
    """Return the error for a scope whose folder the user may not create: the path, the
    system's reason, and where else the memory can go."""
    where = f"{exc.filename}: " if exc.filename else ""
    fix = ("start octomem in your project's folder or give it --project-root (for an MCP "
           "server: in the client's configuration), or write to the global scope"
           if scope == "local" else
           "set --global-root or OCTOMEM_GLOBAL_ROOT to a folder you can write")
    return OctomemError(f"{where}{exc.strerror or exc}: the {scope} scope's memory cannot be "
                        f"created there; {fix}")


class ScopeSet:
    """One lazily opened :class:`Pipeline` per scope (thread-safe).

    :param loaded: the settings both scopes are assembled from.
    :raises OctomemError: unknown or incompatible arms (checked at once, before any
        scope is opened).
    """

    def __init__(self, loaded: LoadedSettings, registry: ArmRegistry, roots: ScopeRoots) -> None:
        check_compatible(loaded.settings.pipeline, registry, loaded.source_of)
        check_arm_settings(loaded, registry)
        self.loaded = loaded
        self.registry = registry
        self.roots = roots
        self._open: dict[ScopeName, Pipeline] = {}
        #: scope -> why its store cannot be read (found when it was opened or searched)
        self.unreadable: dict[ScopeName, str] = {}
        self._lock = threading.Lock()
        self._closed = False
        #: the embedder built before any scope existed (:meth:`shared_arm`), reused by the
        #: first scope opened
        self._embedder: Any = None
        #: scopes whose folder :meth:`get` created with their store (:meth:`discard_if_empty`)
        self._made_folders: set[ScopeName] = set()
        #: scopes whose store this process created (:meth:`get` with ``create``), in order
        self.made: list[ScopeName] = []

    def exists(self, scope: ScopeName) -> bool:
        """Return True when ``scope`` is open, known unreadable, or its store exists
        (the storage's ``store_exists`` probe; nothing is created by asking).

        :raises OctomemError: the storage's probe failed (e.g. its server is down).
        """
        self._drop_gone(scope)
        return (scope in self._open or scope in self.unreadable
                or store_exists(self.loaded, self.registry, self.roots.of(scope)))

    def created(self, scope: ScopeName) -> bool:
        """Same as :meth:`exists` (kept for callers that ask before a write)."""
        return self.exists(scope)

    def _drop_gone(self, scope: ScopeName) -> None:
        """Close ``scope``'s pipeline if its store's file was deleted or replaced since it
        was opened (the storage's optional ``gone()``: one ``os.stat``), dropping every
        in-RAM copy of the old file; the next :meth:`get` opens what is at the path now."""
        with self._lock:
            pipeline = self._open.get(scope)
            check = getattr(pipeline.arms.storage, "gone", None) if pipeline else None
            why = check() if pipeline is not None and callable(check) else None
            if pipeline is None or why is None:
                return
            del self._open[scope]
        log.warning("the %s scope's store changed under this process (%s); it is closed, and "
                    "the next call opens what is at that path now", scope, why)
        retire = getattr(pipeline.arms.storage, "retire_wal", None)
        if callable(retire):  # the old file's log must not be read as the new file's
            retire()
        try:
            pipeline.close()
        except Exception as exc:  # a connection another thread is using: closed when freed
            log.warning("the store of the %s scope was deleted or replaced; closing it: "
                        "%s: %s", scope, type(exc).__name__, exc)

    def get(self, scope: ScopeName, create: bool = False) -> Pipeline | None:
        """Return the pipeline of ``scope``, opening it; ``None`` when its store does not
        exist and ``create`` is false (nothing is created then).

        :raises StoreUnreadableError: the scope's store cannot be read (then and on every
            later call: :attr:`unreadable`).
        :raises OctomemError: the scope's arms cannot be built.
        """
        self._drop_gone(scope)
        with self._lock:
            if self._closed:
                raise InvalidQueryError("the memory is closed")
            pipeline = self._open.get(scope)
            if pipeline is not None:
                return pipeline
            if scope in self.unreadable:
                raise StoreUnreadableError(self.unreadable[scope])
            existed = store_exists(self.loaded, self.registry, self.roots.of(scope))
            if not (create or existed):
                return None
            if not self.roots.of(scope).exists():
                self._made_folders.add(scope)
            try:  # a new store that cannot be set up (a full disk) is deleted: Pipeline
                pipeline = Pipeline(self.loaded, self.registry, self.roots.of(scope),
                                    fresh=not existed)
            except StoreUnreadableError as exc:
                self.unreadable[scope] = str(exc)
                raise
            except PermissionError as exc:  # its folder cannot be made (trial 16 F15)
                raise cannot_create(scope, exc) from exc
            except OctomemError:
                if scope in self._made_folders and not existed:  # its folder too
                    remove_store_dir(self.roots.of(scope), (LOCK_NAME,))
                raise
            shared = next(iter(self._open.values()), None)
            if shared is not None:  # one embedder/reranker/dedup per process, not per scope
                pipeline.arms = replace(
                    pipeline.arms, embedder=shared.arms.embedder,
                    reranker=shared.arms.reranker, dedup=shared.arms.dedup,
                )
            elif self._embedder is not None:  # the model loaded before any scope existed
                pipeline.arms = replace(pipeline.arms, embedder=self._embedder)
            self._open[scope] = pipeline
            if not existed:
                self.made.append(scope)
                log.info("created %s (the %s scope)", self.roots.of(scope), scope)
            return pipeline

    def require(self, scope: ScopeName, create: bool = False) -> Pipeline:
        """Like :meth:`get`, but a scope without a store is an error naming it.

        :raises InvalidQueryError: the scope holds no memory yet and ``create`` is false.
        """
        pipeline = self.get(scope, create)
        if pipeline is None:
            whose = f"local scope of {self.roots.project}" if scope == "local" \
                else "global scope"
            raise InvalidQueryError(
                f"scope: the {whose} holds no memory yet (no store in {self.roots.of(scope)}; "
                "the first add or ingest into it creates one)"
            )
        return pipeline

    def discard_if_empty(self, scope: ScopeName) -> bool:
        """Close ``scope``'s store and delete it when it holds nothing, through its
        storage's optional ``discard_if_empty()`` (a storage without one keeps its store):
        for a store a write created and then stored nothing into (an ingest interrupted
        before its first batch committed, trial 16 F4). The scope's folder goes too when
        this process created it and nothing but the ``.gitignore`` and the embedding lock
        (:mod:`~octomem.engine.embedding_lock`) octomem wrote into it is left there.

        :returns: whether the store was deleted.
        """
        try:
            pipeline = self.get(scope)
        except OctomemError:  # it cannot be opened: nothing to tell it holds nothing
            return False
        if pipeline is None:
            return False
        with self._lock:
            self._open.pop(scope, None)
        discard = getattr(pipeline.arms.storage, "discard_if_empty", None)
        if not callable(discard):
            pipeline.close()
            return False
        if not discard():
            return False
        if scope in self._made_folders:  # with the ingest's embedding lock (empty)
            remove_store_dir(self.roots.of(scope), (LOCK_NAME,))
        return True

    def existing(self, scopes: tuple[ScopeName, ...] = SCOPES) -> list[tuple[ScopeName, Pipeline]]:
        """Return ``(scope, pipeline)`` for each of ``scopes`` that exists, in search order.

        Asked for several scopes, one whose store cannot be read is left out (and named
        in :attr:`unreadable`); asked for one scope alone, that is an error.

        :raises StoreUnreadableError: ``scopes`` is one scope, and its store cannot be read.
        """
        out = []
        for scope in SCOPES:
            if scope not in scopes:
                continue
            try:
                pipeline = self.get(scope)
            except StoreUnreadableError:
                if len(set(scopes)) == 1:
                    raise
                continue
            if pipeline is not None:
                out.append((scope, pipeline))
        return out

    def mark_unreadable(self, scope: ScopeName, why: str) -> None:
        """Record that ``scope``'s store turned out damaged while it was read (``why``: one
        line naming the file and what to do), and close it: later calls treat it as one
        that could not be opened."""
        with self._lock:
            self.unreadable[scope] = why
            pipeline = self._open.pop(scope, None)
        if pipeline is not None:
            pipeline.close()

    def damaged(self, scope: ScopeName, pipeline: Pipeline) -> StoreUnreadableError | None:
        """Ask ``scope``'s storage whether its store is damaged (after a read of it failed
        unexpectedly); if so, mark it unreadable (:meth:`mark_unreadable`) and return the
        error that names it. A storage without a ``damage()`` check is never called damaged.
        """
        check = getattr(pipeline.arms.storage, "damage", None)
        why = check() if callable(check) else None
        if why is None:
            return None
        self.mark_unreadable(scope, why)
        return StoreUnreadableError(why)

    def skipped(self, scopes: tuple[ScopeName, ...] = SCOPES) -> dict[str, str]:
        """Return ``scope -> why`` for each of ``scopes`` whose store cannot be read."""
        return {s: why for s, why in self.unreadable.items() if s in scopes}

    def opened(self) -> list[Pipeline]:
        """Return the pipelines opened so far (none after :meth:`close`)."""
        with self._lock:
            return list(self._open.values())

    def shared_arm(self, kind: str) -> Any:
        """Return the shared embedder, reranker or dedup (opening an existing scope,
        ``global`` first, if none is open).

        With no scope created yet, the embedder is built on its own (no store is created)
        and the first scope opened later uses it; a reranker or dedup is then ``None``.

        :raises StoreUnreadableError: no scope is open, and the existing ones cannot be
            read.
        """
        pipeline = next(iter(self._open.values()), None)
        if pipeline is None:
            unreadable: StoreUnreadableError | None = None
            for scope in ("global", "local"):
                try:
                    pipeline = self.get(scope)
                except StoreUnreadableError as exc:
                    unreadable = unreadable or exc
                if pipeline is not None:
                    break
            if pipeline is None and unreadable is not None:
                raise unreadable
        if pipeline is not None:
            return getattr(pipeline.arms, kind)
        if kind != "embedder":
            return None
        with self._lock:
            if self._embedder is None:
                self._embedder = build_embedder(self.loaded, self.registry, self.roots.global_)
            return self._embedder

    def close(self) -> None:
        """Close every open scope; later calls raise."""
        with self._lock:
            self._closed = True
            pipelines, self._open = list(self._open.values()), {}
        for pipeline in pipelines:
            pipeline.close()
