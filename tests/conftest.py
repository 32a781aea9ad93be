"""Shared fixtures: temporary roots (home, data, project as the current directory), settings
without the real model, registered test plugins."""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from octomem.engine.manager import ArmRegistry, load_registry
from octomem.engine.memory.facade import Memory, open_memory
from octomem.engine.settings import LoadedSettings, load_settings

# No per-example time limit for hypothesis (its default: 200 ms): an example slowed past it
# by a loaded machine fails as "Unreliable test timings", and speed targets belong in the
# committed benchmark reports. With CI set hypothesis loads its own "ci" profile, which
# has none either (and a fixed seed): that one is kept.
settings.register_profile("octomem", deadline=None)
if settings.default is not None and settings.default.deadline is not None:
    settings.load_profile("octomem")


@pytest.fixture(scope="session")
def _session_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache directory for the session: the re-quantized model is built once."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, _session_cache: Path
) -> None:
    """Keep every test away from the real home, config, data and cache directories."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(_session_cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for key in list(os.environ):
        if key.startswith("OCTOMEM_"):
            monkeypatch.delenv(key)
    # no test builds the 21k-word table (~30 s of CPU) unless it asks for it
    # (test_conversation_word_table): warm-ups find none and embed words live
    monkeypatch.setattr("octomem.plugins.conversation.ranker.build_table",
                        lambda *args, **kwargs: None)
    # the current directory is the default project: its .octomem/ is the local scope
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd-project"))


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A fresh, empty data directory."""
    path = tmp_path / "data"
    path.mkdir()
    return path


@pytest.fixture
def registry() -> ArmRegistry:
    """Every installed arm (entry points of group ``octomem``)."""
    return load_registry()


@pytest.fixture
def hashing_settings(data_dir: Path) -> LoadedSettings:
    """Default arms but the deterministic hashing embedder: no model file is read."""
    return load_settings(
        overrides={"data_dir": str(data_dir), "pipeline": {"embedder": "hashing"}},
        read_user_config=False,
    )


@pytest.fixture
def install_test_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[str, str], Path]]:
    """Install a plugin as a real distribution with an ``octomem`` entry point.

    Call ``install_test_plugin(module_name, source)``: writes the module and a
    ``.dist-info`` with ``entry_points.txt`` into a folder put first on ``sys.path``
    (and ``PYTHONPATH``, for subprocesses). Undone after the test. The entry point is
    named as the module unless ``entry_point=NAME`` is given.
    """
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]))
    installed: list[str] = []

    def install(module_name: str, source: str, entry_point: str | None = None) -> Path:
        (site / f"{module_name}.py").write_text(textwrap.dedent(source))
        # the folder name must use underscores: importlib.metadata reads the dist name
        # from it up to the first "-" (so "octomem-test-x-..." would shadow "octomem")
        dist = site / f"{module_name}-0.0.1.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {module_name.replace('_', '-')}\nVersion: 0.0.1\n"
        )
        (dist / "entry_points.txt").write_text(
            f"[octomem]\n{entry_point or module_name} = {module_name}\n")
        installed.append(module_name)
        return site

    yield install
    for name in installed:
        sys.modules.pop(name, None)


# --- Arm contract fixtures (storage, keyword and semantic contract suites) -----------------


@pytest.fixture
def build_arm(registry: ArmRegistry, tmp_path: Path) -> Iterator[Callable[..., object]]:
    """Build arms through their registered spec factory, with default options.

    Call ``build_arm(kind, name, storage=None, root=None)``; ``root`` defaults to one
    scope directory per test. Storages built here are closed after the test.
    """
    from octomem.engine.arms import ArmContext

    storages: list[object] = []

    def build(kind: str, name: str, storage: object = None, root: Path | None = None) -> object:
        spec = registry.get(kind, name)  # type: ignore[arg-type]
        context = ArmContext(root=root or tmp_path / "scope", storage=storage)
        arm = spec.factory(spec.options_model(), context)
        if kind == "storage":
            storages.append(arm)
        return arm

    yield build
    for storage in storages:
        storage.close()  # type: ignore[attr-defined]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """``tmp_path/project``, created: the project folder a server or a CLI run is started in."""
    path = tmp_path / "project"
    path.mkdir(exist_ok=True)
    return path


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    """A memory with the hashing embedder (no model load): local scope in
    ``tmp_path/project`` (created), global in ``tmp_path/global``. Test modules that need
    other settings define their own ``memory``."""
    (tmp_path / "project").mkdir(exist_ok=True)
    opened = open_memory(overrides={"pipeline": {"embedder": "hashing"}},
                         project_root=tmp_path / "project", global_root=tmp_path / "global")
    yield opened
    opened.close()
