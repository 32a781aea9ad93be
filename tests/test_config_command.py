"""``octomem config`` shows every effective value, its group and the layer it came from."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from octomem.engine.cli import app
from octomem.engine.settings import project_config_path, setting_group, user_config_path


def test_provenance_of_a_value_set_in_each_layer(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
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
    lines = result.output.splitlines()
    rows = {line.split()[0]: line.split() for line in lines if " = " in line}
    assert rows["retrieval.top_k"][2:6] == ["3", "retrieval", "·", "user"]
    assert rows["retrieval.rrf_k"][2:6] == ["30", "retrieval", "·", "project"]
    assert rows["retrieval.candidate_k"][2:6] == ["70", "retrieval", "·", "--config"]
    assert rows["retrieval.rerank_top_n"][2:6] == ["15", "retrieval", "·", "environment"]
    assert rows["retrieval.fusion"][2:6] == ['"weighted"', "retrieval", "·", "--set"]  # TOML
    assert rows["arms.cosine.threshold"][2:6] == ["0.9", "retrieval", "·", "--set"]
    assert rows["pipeline.embedder"][2:6] == ['"fastembed"', "identity", "·", "default"]
    assert rows["global_root"][2] == "(none)"  # not set: TOML has no null
    assert rows["arms.fastembed.model"][3] == "identity"
    meaning = {line.split()[0]: lines[i + 1].strip() for i, line in enumerate(lines)
               if " = " in line and i + 1 < len(lines)}
    assert meaning["retrieval.top_k"].endswith("hits in an answer")  # each one's meaning
    assert "rank from an in-RAM copy of the postings" in meaning["arms.fts5.in_ram"]


def test_config_reads_at_80_columns() -> None:
    result = CliRunner().invoke(app, ["config"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(len(line) for line in lines) <= 80
    top_k = next(line for line in lines if line.startswith("retrieval.top_k = "))
    assert top_k.split()[2:] == ["10", "retrieval", "·", "default"]


def test_groups() -> None:
    assert setting_group("pipeline.embedder") == "identity"
    assert setting_group("retrieval.rrf_k") == "retrieval"
    assert setting_group("data_dir") == "runtime"
    with pytest.raises(KeyError):
        setting_group("retrieval.nope")
