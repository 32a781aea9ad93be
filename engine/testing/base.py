"""What every contract suite shares: building the arm under test from its registered spec.

A suite is a pytest test class; a plugin's test module subclasses it and names the arm
under test with class attributes (``ARM``, ``STORAGE``) or by parametrizing the
fixtures ``arm_name`` / ``storage_name``. Arms are built through the registry, exactly
as a pipeline builds them (entry points of group ``octomem``), with default options
unless a fixture named ``octomem_arm_options`` (or the class attribute ``OPTIONS``)
gives some. An arm whose options model has required fields that nobody gave is
skipped, with the reason, rather than failed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ValidationError

from ..arms import ArmContext, ArmKind
from ..manager import ArmRegistry, load_registry

#: Fixture a test module or conftest.py may define: arm name -> options (a dict per arm).
OPTIONS_FIXTURE = "octomem_arm_options"
#: Fixture a test module or conftest.py may define: the :class:`ArmRegistry` to build from.
REGISTRY_FIXTURE = "octomem_registry"


def required_options(kind: ArmKind, name: str, registry: ArmRegistry | None = None) -> list[str]:
    """Return the options arm ``name`` cannot be built without (no default), e.g. ``["uri"]``."""
    spec = (registry or load_registry()).get(kind, name)
    return [f for f, info in spec.options_model.model_fields.items() if info.is_required()]


def registered_names(
    kind: ArmKind, registry: ArmRegistry | None = None, *, runnable: bool = False
) -> list[str]:
    """Return the names of every installed arm of ``kind``, sorted (for ``parametrize``).

    :param runnable: leave out arms with :func:`required_options` (they need a fixture
        ``octomem_arm_options``, e.g. a server's address, that only their own suite has).
    """
    registry = registry or load_registry()
    return [n for n in registry.names(kind)
            if not (runnable and required_options(kind, n, registry))]


def arm_pairs(
    kind: ArmKind, registry: ArmRegistry | None = None, *, runnable: bool = False
) -> list[tuple[str, str]]:
    """Return ``(arm, storage)`` for every installed arm of ``kind`` and every installed
    storage it accepts (its ``requires_storage``, or any storage when that is empty).

    :param runnable: leave out pairs where either arm has :func:`required_options`.
    """
    registry = registry or load_registry()
    pairs = []
    for arm in registered_names(kind, registry, runnable=runnable):
        needs = registry.get(kind, arm).requires_storage
        pairs += [(arm, s) for s in registered_names("storage", registry, runnable=runnable)
                  if not needs or s in needs]
    return pairs


def _optional_fixture(request: pytest.FixtureRequest, name: str) -> Any:
    """Return the value of fixture ``name`` if some conftest or module defines it, else None."""
    try:
        return request.getfixturevalue(name)
    except pytest.FixtureLookupError:
        return None


class ArmBuilder:
    """Builds arms through their registered spec factories, as a pipeline would.

    :param options: arm name -> options mapping (validated by the arm's options model).
    :param root: the default scope directory (``ArmContext.root``).
    """

    def __init__(self, registry: ArmRegistry, options: Mapping[str, Mapping[str, Any]],
                 root: Path) -> None:
        self.registry, self.options, self.root = registry, options, root
        self._storages: list[Any] = []

    def options_for(self, kind: ArmKind, name: str) -> BaseModel:
        """Validate the options of arm ``name``; skip the test when required ones are missing."""
        spec = self.registry.get(kind, name)
        raw = dict(self.options.get(name, {}))
        try:
            return spec.options_model(**raw)
        except ValidationError as exc:
            missing = [".".join(map(str, e["loc"])) for e in exc.errors() if e["type"] == "missing"]
            if missing and len(missing) == len(exc.errors()):
                pytest.skip(f"{kind} arm {name!r} needs options {missing}; give them in a "
                            f"fixture named {OPTIONS_FIXTURE!r} returning {{{name!r}: {{...}}}}")
            raise

    def build(self, kind: ArmKind, name: str, storage: Any = None, root: Path | None = None) -> Any:
        """Build arm ``name`` of ``kind`` in scope ``root`` (default: :attr:`root`) over
        ``storage``; storages built here are closed by :meth:`close`."""
        spec = self.registry.get(kind, name)
        arm = spec.factory(self.options_for(kind, name),
                           ArmContext(root=root or self.root, storage=storage))
        if kind == "storage":
            self._storages.append(arm)
        return arm

    def close(self) -> None:
        """Close every storage this builder built."""
        for storage in self._storages:
            storage.close()
        self._storages.clear()


class ArmContract:
    """Base of the suites: fixtures naming and building the arm under test.

    :cvar ARM: registered name of the arm under test (or parametrize ``arm_name``).
    :cvar STORAGE: registered name of the storage (or parametrize ``storage_name``).
    :cvar OPTIONS: arm name -> options; a fixture ``octomem_arm_options`` overrides them.
    """

    ARM: ClassVar[str | None] = None
    STORAGE: ClassVar[str | None] = None
    OPTIONS: ClassVar[Mapping[str, Mapping[str, Any]]] = {}

    @pytest.fixture
    def arm_name(self) -> str:
        """The registered name of the arm under test (class attribute ``ARM``)."""
        if not self.ARM:
            pytest.fail(f"{type(self).__name__}: set ARM = '<arm name>' or parametrize arm_name")
        return self.ARM

    @pytest.fixture
    def storage_name(self) -> str:
        """The registered name of the storage (class attribute ``STORAGE``)."""
        if not self.STORAGE:
            pytest.fail(f"{type(self).__name__}: set STORAGE = '<storage name>' or parametrize "
                        "storage_name")
        return self.STORAGE

    @pytest.fixture
    def octomem_build(self, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ArmBuilder]:
        """An :class:`ArmBuilder` over a fresh scope directory; its storages closed after."""
        registry = _optional_fixture(request, REGISTRY_FIXTURE) or load_registry()
        options = {**self.OPTIONS, **(_optional_fixture(request, OPTIONS_FIXTURE) or {})}
        builder = ArmBuilder(registry, options, tmp_path / "scope")
        yield builder
        builder.close()
