"""``octomem bench --query-filter``, ``--save-runs`` and ``--abstention`` on a tiny BEIR folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_data import QUERIES, write_beir
from typer.testing import CliRunner

from octomem.benchmarks.command import run_bench
from octomem.benchmarks.dataset import load_dataset
from octomem.benchmarks.subsets import filter_queries, other_group_filters, trec_lines
from octomem.engine.errors import OctomemError

HASHING = {"pipeline": {"embedder": "hashing"}}


@pytest.fixture
def beir(tmp_path: Path) -> Path:
    return write_beir(tmp_path / "tiny")


def test_query_filter_keeps_one_group(beir: Path) -> None:
    dataset = load_dataset(beir)
    only = filter_queries(dataset, "metadata.grp=g2")
    assert set(only.queries) == {"q2", "q3"} and set(only.qrels) == {"q2", "q3"}
    both = filter_queries(dataset, "metadata.grp=g1, g2")
    assert set(both.queries) == set(dataset.queries)
    with pytest.raises(OctomemError, match="expected metadata.FIELD=VALUE"):
        filter_queries(dataset, "grp=g1")
    with pytest.raises(OctomemError, match="no judged query"):
        filter_queries(dataset, "metadata.grp=g9")


def test_other_group_filters_point_at_the_next_group(beir: Path) -> None:
    other = other_group_filters(load_dataset(beir), "metadata.grp")
    assert {q: dict(f.metadata) for q, f in other.items()} == {
        q: {"grp": "g2" if g == "g1" else "g1"} for q, _, g in QUERIES}
    with pytest.raises(OctomemError, match="give --group-by"):
        other_group_filters(load_dataset(beir), None)


def test_trec_lines_rank_each_query_best_first() -> None:
    assert trec_lines("row", {"q1": {"a": 1.0, "b": 3.0}}) == [
        "q1 Q0 b 1 3.000000 row", "q1 Q0 a 2 1.000000 row"]


def test_abstention_pass_counts_empty_answers(beir: Path, tmp_path: Path) -> None:
    result = run_bench(beir, ["fts5=fts5"], group_by="metadata.grp", cache_dir=tmp_path / "c",
                       overrides=HASHING, abstention=True, query_filter="metadata.grp=g1")
    assert set(result.dataset.queries) == {"q1", "q4"}
    measured = result.combos[0].extra["after"]
    # keyword only: q1 "cat on a mat" finds b1 (cat, mat) in g2; q4 "zebra stripes" nothing
    assert measured["queries"] == 2 and measured["other_empty"] == 0.5
    assert measured["own_empty"] == 0.5 and measured["own_evidence_at_10"] == 0.5
    assert measured["own_evidence_before"] == 1 and measured["own_kept"] == 1.0


def test_cli_bench_saves_runs_and_reports_the_subset(beir: Path, tmp_path: Path) -> None:
    from octomem.engine.cli import app

    out, runs = tmp_path / "out", tmp_path / "runs"
    result = CliRunner().invoke(app, [
        "--set", "pipeline.embedder=hashing", "bench", str(beir), "--combo", "k=fts5",
        "--group-by", "metadata.grp", "--query-filter", "metadata.grp=g2", "--save-runs",
        str(runs), "--abstention", "--cache-dir", str(tmp_path / "cache"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = (runs / "k.trec").read_text().split("\n")
    assert lines[0].startswith(("q2 Q0 b", "q3 Q0 b")) and lines[0].endswith(" k")
    assert {line.split()[0] for line in lines if line} == {"q2", "q3"}
    report = json.loads((out / "report.json").read_text())
    assert report["query_filter"] == "metadata.grp=g2" and report["dataset"]["queries"] == 2
    assert report["rows"][0]["abstention"]["queries"] == 2
    assert "## Abstention" in (out / "report.md").read_text()
