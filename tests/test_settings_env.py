"""The ``OCTOMEM_*`` layer (``engine/settings_env.py``) reads what pydantic-settings'
source read when the settings model was a ``BaseSettings``: names in any case, nested
keys joined by ``__``, JSON for tables; nothing when no variable is set."""

from __future__ import annotations

import pytest

from octomem.engine.errors import ArmConfigError
from octomem.engine.settings import ENV_PREFIX, Settings, load_settings
from octomem.engine.settings_env import env_layer


def test_no_variable_is_an_empty_layer() -> None:
    assert env_layer(Settings, ENV_PREFIX) == {}


def test_names_in_any_case_nested_keys_and_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("octomem_retrieval__top_k", "3")
    monkeypatch.setenv("OCTOMEM_ARMS", '{"fts5": {"max_terms": 12}}')
    loaded = load_settings(read_user_config=False)
    assert loaded.settings.retrieval.top_k == 3
    assert loaded.settings.arms == {"fts5": {"max_terms": 12}}
    assert loaded.source_of("retrieval.top_k") == "environment"
    assert loaded.source_of("arms.fts5.max_terms") == "environment"


def test_an_unknown_variable_names_the_known_prefixes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OCTOMEM_RETRIVAL__TOP_K", "3")
    with pytest.raises(ArmConfigError, match="unknown environment variable "
                       "OCTOMEM_RETRIVAL__TOP_K; known prefixes: OCTOMEM_DATA_DIR"):
        load_settings(read_user_config=False)
