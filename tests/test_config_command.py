"""``octomem config`` shows every effective value, its group and the layer it came from."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from octomem.engine.cli import app
from octomem.engine.settings import project_config_path, setting_group, user_config_path


def test_provenance_of_a_value_set_in_each_layer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    user = user_config_path()
    user.parent.mkdir(parents=True)
    user.write_text("[retrieval]\ntop_k = 3\n")
    project = tmp_path / "proj"
    project_config_path(project).parent.mkdir(parents=True)
    project_config_path(project).write_text("[retrieval]\nrrf_k = 30\n")
    cfg = tmp_path / "extra.toml"
    cfg.write_text("[retrieval]\ncandidate_k = 70\n")
    monkeypatch.chdir(project)
    monkeypatch.setenv("OCTOMEM_RETRIEVAL__RERANK_TOP_N", "15")
    result = CliRunner().invoke(
        app, ["--config", str(cfg), "--set", "retrieval.fusion=weighted",
              "--set", "arms.cosine.threshold=0.9", "config"],
        env={"COLUMNS": "250"},
    )
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line.split() for line in result.output.splitlines() if "." in line[:40]}
    assert rows["retrieval.top_k"][1:4] == ["3", "retrieval", "user"]
    assert rows["retrieval.rrf_k"][1:4] == ["30", "retrieval", "project"]
    assert rows["retrieval.candidate_k"][1:4] == ["70", "retrieval", "--config"]
    assert rows["retrieval.rerank_top_n"][1:4] == ["15", "retrieval", "environment"]
    assert rows["retrieval.fusion"][1:4] == ["'weighted'", "retrieval", "--set"]
    assert rows["arms.cosine.threshold"][1:4] == ["0.9", "retrieval", "--set"]
    assert rows["pipeline.embedder"][1:4] == ["'fastembed'", "identity", "default"]
    assert rows["arms.fastembed.model"][2] == "identity"
    lines = {line.split()[0]: line for line in result.output.splitlines() if "." in line[:40]}
    assert lines["retrieval.top_k"].rstrip().endswith("hits in an answer")  # each one's meaning
    assert "rank from an in-RAM copy of the postings" in lines["arms.fts5.in_ram"]


def test_groups() -> None:
    assert setting_group("pipeline.embedder") == "identity"
    assert setting_group("retrieval.rrf_k") == "retrieval"
    assert setting_group("data_dir") == "runtime"
    with pytest.raises(KeyError):
        setting_group("retrieval.nope")
