"""The ``OCTOMEM_*`` layer (``engine/settings_env.py``) reads what pydantic-settings'
source read when the settings model was a ``BaseSettings``: names in any case, nested
keys joined by ``__``, JSON for tables; nothing when no variable is set."""

from __future__ import annotations

from pathlib import Path

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


@pytest.mark.parametrize(("name", "value", "shape", "example"), [
    ("OCTOMEM_INGEST__ALLOWED_ROOTS", "/data/docs", "list", '\'["/data/docs"]\''),
    ("OCTOMEM_RETRIEVAL__WEIGHTS", "fts5", "table", '\'{"key": 1}\''),
    ("OCTOMEM_ARMS", "fts5", "table", '\'{"key": 1}\''),
])
def test_a_list_or_table_not_written_as_json_is_one_line_naming_the_variable(
        monkeypatch: pytest.MonkeyPatch, name: str, value: str, shape: str,
        example: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ArmConfigError) as caught:
        load_settings(read_user_config=False)
    message = str(caught.value)
    assert message == (f"environment variable {name}: {value!r} is not JSON; a {shape} "
                       f"setting is written as JSON, e.g. {name}={example}")
    monkeypatch.setenv(name, '["/data/docs"]' if shape == "list" else '{"fts5": 1.0}')
    if name != "OCTOMEM_ARMS":  # the JSON form is read
        assert load_settings(read_user_config=False).source_of(
            name[len("OCTOMEM_"):].lower().replace("__", ".")) == "environment"


def test_the_cli_and_the_server_refuse_it_in_one_line(tmp_path: Path) -> None:
    from cli_run import octomem

    for command in (("status",), ("serve",)):
        ran = octomem(tmp_path, *command, ok=False, spawn=True,
                      OCTOMEM_INGEST__ALLOWED_ROOTS="/data/docs")
        assert ran.code == 1 and ran.err.count("\n") == 1, ran.err
        assert "OCTOMEM_INGEST__ALLOWED_ROOTS" in ran.err and "Traceback" not in ran.err
