from __future__ import annotations

from pathlib import Path

import pytest

from octomem.engine.errors import ArmConfigError
from octomem.engine.settings import load_settings, parse_overrides, user_config_path


def test_defaults() -> None:
    s = load_settings().settings
    assert (s.pipeline.storage, s.pipeline.keyword, s.pipeline.embedder) == (
        "sqlite", "fts5", "fastembed")
    assert s.retrieval.rrf_k == 2 and s.retrieval.candidate_k == 100


def test_layers_win_in_order_and_record_provenance(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    user = user_config_path()
    user.parent.mkdir(parents=True)
    user.write_text("[retrieval]\ntop_k = 3\nrrf_k = 10\ncandidate_k = 50\n")
    cfg = tmp_path / "c.toml"
    cfg.write_text("[retrieval]\nrrf_k = 20\ncandidate_k = 70\n")
    monkeypatch.setenv("OCTOMEM_RETRIEVAL__CANDIDATE_K", "80")
    loaded = load_settings(cfg, parse_overrides(["retrieval.fusion=weighted"]))
    r = loaded.settings.retrieval
    assert (r.top_k, r.rrf_k, r.candidate_k, r.fusion) == (3, 20, 80, "weighted")
    assert loaded.source_of("retrieval.top_k").startswith("user config")
    assert loaded.source_of("retrieval.rrf_k").startswith("--config")
    assert loaded.source_of("retrieval.candidate_k") == "environment"
    assert loaded.source_of("retrieval.fusion") == "--set"
    assert loaded.source_of("retrieval.rerank_top_n") == "default"


def test_unknown_key_names_key_layer_and_closest(tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("[retrieval]\nrrfk = 20\n")
    with pytest.raises(ArmConfigError,
                       match=r"'retrieval.rrfk' in --config .*did you mean 'retrieval.rrf_k'"):
        load_settings(cfg)


def test_unknown_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OCTOMEM_TOPK", "3")
    with pytest.raises(ArmConfigError, match="OCTOMEM_TOPK"):
        load_settings()


def test_out_of_range_value_names_key_and_layer() -> None:
    with pytest.raises(ArmConfigError, match=r"'retrieval.top_k' from --set"):
        load_settings(overrides=parse_overrides(["retrieval.top_k=0"]))


def test_bad_toml_names_the_file(tmp_path: Path) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[retrieval\n")
    with pytest.raises(ArmConfigError, match="not valid TOML"):
        load_settings(cfg)


def test_set_values_are_parsed_as_toml() -> None:
    assert parse_overrides(["a.b=3", "a.c=true", "d=hello", "e=[1, 2]", "f="]) == {
        "a": {"b": 3, "c": True}, "d": "hello", "e": [1, 2], "f": "",
    }
    with pytest.raises(ArmConfigError, match="key=value"):
        parse_overrides(["novalue"])


def test_every_arms_table_is_checked_and_underscores_stand_for_dashes() -> None:
    from octomem.engine.assembly import check_arm_settings
    from octomem.engine.errors import ArmConfigError
    from octomem.engine.manager import load_registry

    registry = load_registry()
    loaded = load_settings(None, {"arms": {"sqlite_vec": {"scan": "vec0"}}})
    check_arm_settings(loaded, registry)  # as OCTOMEM_ARMS__SQLITE_VEC__SCAN=vec0 spells it
    assert loaded.settings.arms == {"sqlite-vec": {"scan": "vec0"}}
    typo = load_settings(None, {"arms": {"sqlite-vek": {"scan": "vec0"}}})
    with pytest.raises(ArmConfigError, match=r"unknown arm 'sqlite-vek'.*mean 'arms.sqlite-vec'"):
        check_arm_settings(typo, registry)
    with pytest.raises(ArmConfigError, match=r"'arms.sqlite-vec.scan' from --set.*got 'gpu'"):
        check_arm_settings(load_settings(None, {"arms": {"sqlite_vec": {"scan": "gpu"}}}), registry)
    # the layer is named for a key set below the one refused
    with pytest.raises(ArmConfigError, match=r"unknown arm 'fts' in 'arms.fts' from --set"):
        check_arm_settings(load_settings(None, {"arms": {"fts": {"in_ram": "always"}}}), registry)
    # an arm that is installed but not in the pipeline is checked too
    with pytest.raises(ArmConfigError, match=r"unknown setting 'arms.mmr.lambda'"):
        check_arm_settings(load_settings(None, {"arms": {"mmr": {"lambda": 5}}}), registry)
