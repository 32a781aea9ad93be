"""``octomem bench --abstention --abstention-groups N|all``: each query asked of many other
groups' memories, reported beside the one-group figure (a real SQLite store, FTS5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from octomem.benchmarks.command import run_bench
from octomem.benchmarks.dataset import load_dataset
from octomem.benchmarks.subsets import other_groups_filters, parse_abstention_groups
from octomem.engine.errors import OctomemError

HASHING = {"pipeline": {"embedder": "hashing"}}
# Three groups: q1's words are in g3 (not in g2, the group after g1), nothing else is
# anywhere but in its own group.
CORPUS = [
    ("a1", "the cat sat on the mat and purred", "g1"),
    ("a2", "a dog chased the cat around the garden", "g1"),
    ("b1", "a parrot can learn words and sing", "g2"),
    ("b2", "rain water fills the garden pond", "g2"),
    ("c1", "my cat likes warm milk and the mat", "g3"),
    ("c2", "goldfish swim in a bowl of water", "g3"),
]
QUERIES = [("q1", "cat on a mat", "g1", "a1"), ("q2", "parrot words", "g2", "b1"),
           ("q3", "goldfish bowl", "g3", "c2")]


@pytest.fixture
def beir(tmp_path: Path) -> Path:
    folder = tmp_path / "three"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(
        json.dumps({"_id": i, "title": "", "text": t, "metadata": {"grp": g}}) + "\n"
        for i, t, g in CORPUS))
    (folder / "queries.jsonl").write_text("".join(
        json.dumps({"_id": q, "text": t, "metadata": {"grp": g}}) + "\n"
        for q, t, g, _ in QUERIES))
    (folder / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, _, _, d in QUERIES))
    return folder


def test_every_other_group_is_asked_beside_the_next_one(beir: Path, tmp_path: Path) -> None:
    result = run_bench(beir, ["fts5=fts5"], group_by="metadata.grp", cache_dir=tmp_path / "c",
                       overrides=HASHING, abstention=True, abstention_groups="all")
    measured = result.combos[0].extra["after"]
    # the next group: q1 -> g2, q2 -> g3, q3 -> g1, none holds the query's words
    assert measured["other_asked"] == 3 and measured["other_empty"] == 1.0
    # every other group: 3 x 2 asks, q1 answered by c1 of g3 ("my cat ... the mat")
    assert measured["others_groups"] == "all" and measured["others_asked"] == 6
    assert measured["others_empty"] == pytest.approx(5 / 6)
    assert measured["others_queries_answered"] == 1
    assert measured["own_kept"] == 1.0


def test_n_other_groups_are_the_next_n(beir: Path, tmp_path: Path) -> None:
    result = run_bench(beir, ["fts5=fts5"], group_by="metadata.grp", cache_dir=tmp_path / "c",
                       overrides=HASHING, abstention=True, abstention_groups="1")
    measured = result.combos[0].extra["after"]
    assert measured["others_groups"] == 1 and measured["others_asked"] == 3
    assert measured["others_empty"] == 1.0 and measured["others_queries_answered"] == 0
    groups = other_groups_filters(load_dataset(beir), "metadata.grp", 2)
    assert [dict(f.metadata) for f in groups["q2"]] == [{"grp": "g3"}, {"grp": "g1"}]


def test_a_half_is_asked_of_its_own_half_only(beir: Path, tmp_path: Path) -> None:
    result = run_bench(beir, ["fts5=fts5"], group_by="metadata.grp", cache_dir=tmp_path / "c",
                       overrides=HASHING, abstention=True, abstention_groups="all",
                       query_filter="metadata.grp=g1,g2")
    measured = result.combos[0].extra["after"]
    # q1 is asked of g2 only (g3 is outside the half), q2 of g1: both empty
    assert measured["others_asked"] == 2 and measured["others_empty"] == 1.0


def test_bad_values_are_errors_naming_the_option(beir: Path, tmp_path: Path) -> None:
    assert parse_abstention_groups("all") is None and parse_abstention_groups("7") == 7
    for bad in ("0", "-2", "some"):
        with pytest.raises(OctomemError, match="--abstention-groups"):
            parse_abstention_groups(bad)
    with pytest.raises(OctomemError, match="with --abstention and --group-by"):
        run_bench(beir, ["fts5=fts5"], group_by="metadata.grp", cache_dir=tmp_path / "c",
                  overrides=HASHING, abstention_groups="all")
    with pytest.raises(OctomemError, match="other groups among them are needed"):
        run_bench(beir, ["fts5=fts5"], group_by="metadata.grp", cache_dir=tmp_path / "c",
                  overrides=HASHING, abstention=True, abstention_groups="all",
                  query_filter="metadata.grp=g1")


def test_cli_report_shows_both_columns(beir: Path, tmp_path: Path) -> None:
    from octomem.engine.cli import app

    out = tmp_path / "out"
    result = CliRunner().invoke(app, [
        "--set", "pipeline.embedder=hashing", "bench", str(beir), "--combo", "k=fts5",
        "--group-by", "metadata.grp", "--abstention", "--abstention-groups", "all",
        "--cache-dir", str(tmp_path / "cache"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = (out / "report.md").read_text()
    assert "| k | 1.000 | 0.000 | 1.000 | 1.000 |" in report, report
    assert "Each query also asked of every other group" in report
    assert "| k | 6 | 0.833 | 1 of 3 |" in report, report
