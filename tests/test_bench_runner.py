"""The runner end to end on a tiny BEIR folder: group-by filtering, the cache, the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_data import CORPUS, QUERIES, write_beir
from typer.testing import CliRunner

from octomem.benchmarks.command import run_bench
from octomem.benchmarks.dataset import load_dataset, parse_group_by, query_filters
from octomem.benchmarks.report import write_report
from octomem.engine.errors import OctomemError
from octomem.plugins.hashing.embedder import HashingEmbedder

HASHING = {"pipeline": {"embedder": "hashing"}}
GROUP = {d: g for d, _, _, g in CORPUS}
QUERY_GROUP = {q: g for q, _, g in QUERIES}
ROWS = [
    "grep=grep",
    "fts5=fts5",
    "bm25=rank-bm25",
    "vec=sqlite-vec",
    "hybrid=fts5+sqlite-vec",
    "hybrid-w=fts5+sqlite-vec+weighted+cosine",
]


@pytest.fixture
def beir(tmp_path: Path) -> Path:
    return write_beir(tmp_path / "tiny")


def test_load_dataset_keeps_only_judged_queries(beir: Path) -> None:
    data = load_dataset(beir)
    assert set(data.queries) == {"q1", "q2", "q3", "q4"}
    assert data.qrels["q2"] == {"b3": 2, "b2": 0}
    with pytest.raises(OctomemError, match="splits here: test"):
        load_dataset(beir, "train")


def test_group_by_parsing(beir: Path) -> None:
    assert parse_group_by("metadata.grp") == "grp"
    with pytest.raises(OctomemError, match="metadata.FIELD"):
        parse_group_by("grp")
    filters = query_filters(load_dataset(beir), "metadata.grp")
    assert filters["q2"].metadata == {"grp": "g2"}
    with pytest.raises(OctomemError, match="no metadata field 'nope'"):
        query_filters(load_dataset(beir), "metadata.nope")


def test_group_by_restricts_every_arm(beir: Path, tmp_path: Path) -> None:
    result = run_bench(
        beir, ROWS, group_by="metadata.grp", cache_dir=tmp_path / "cache", overrides=HASHING
    )
    for row in result.combos:
        assert row.run, row.combo.name
        for qid, docs in row.run.items():
            assert {GROUP[d] for d in docs} <= {QUERY_GROUP[qid]}, (row.combo.name, qid, docs)
    ungrouped = run_bench(beir, ["fts5=fts5"], cache_dir=tmp_path / "cache", overrides=HASHING)
    assert any(GROUP[d] == "g2" for d in ungrouped.combos[0].run["q1"])  # b1 mentions cat and mat


def test_second_run_reuses_the_cache(
    beir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedded: list[str] = []
    original = HashingEmbedder.embed_documents

    def spy(self: HashingEmbedder, texts: list[str]):  # type: ignore[no-untyped-def]
        embedded.extend(texts)
        return original(self, texts)

    monkeypatch.setattr(HashingEmbedder, "embed_documents", spy)
    corpus_texts = {f"{title}\n{text}" for _, title, text, _ in CORPUS}
    first = run_bench(beir, ROWS, cache_dir=tmp_path / "cache", overrides=HASHING)
    assert sorted(t for t in embedded if t in corpus_texts) == sorted(
        corpus_texts
    )  # once, for 3 rows
    embedded.clear()
    second = run_bench(beir, ROWS, cache_dir=tmp_path / "cache", overrides=HASHING)
    assert not [t for t in embedded if t in corpus_texts]
    assert second.build == first.build
    assert second.evaluation.scores == first.evaluation.scores


def test_report_files_and_best_single_arm(beir: Path, tmp_path: Path) -> None:
    result = run_bench(beir, ROWS, cache_dir=tmp_path / "cache", overrides=HASHING)
    paths = write_report(result, tmp_path / "out")
    data = json.loads(paths["json"].read_text())
    assert [r["name"] for r in data["rows"]] == [r.split("=")[0] for r in ROWS]
    assert data["stat_test"]["baseline"] in {"fts5", "bm25", "vec"}
    assert all(
        set(r["quality"]) == {"ndcg@10", "recall@10", "recall@100", "mrr@10"} for r in data["rows"]
    )
    assert data["rows"][1]["latency"]["total"]["p50_ms"] > 0
    assert data["rows"][0]["p_value_vs_baseline"] is not None
    assert (
        paths["quality_plot"].stat().st_size > 1000 and paths["latency_plot"].stat().st_size > 1000
    )
    text = paths["markdown"].read_text()
    assert "| hybrid-w |" in text and "nDCG@10" in text and "keyword:fts5" in text


def test_cli_bench(beir: Path, tmp_path: Path) -> None:
    from octomem.engine.cli import app

    out = tmp_path / "cli-out"
    result = CliRunner().invoke(
        app,
        [
            "--set",
            "pipeline.embedder=hashing",
            "bench",
            str(beir),
            "--combo",
            "k=fts5",
            "--combo",
            "h=fts5+sqlite-vec",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert (out / "report.md").is_file() and (out / "report.json").is_file()


def test_other_is_what_the_arms_critical_path_leaves() -> None:
    from octomem.benchmarks.runner import Arms, arms_ms

    stages = {"fts5": 13.0, "embed_query": 4.0, "sqlite-vec": 11.0, "cosine": 2.0}
    both = ("sqlite-vec", "embed_query")
    assert arms_ms(stages, Arms("fts5", both, parallel=True)) == 15.0  # max(13, 4 + 11)
    assert arms_ms(stages, Arms("fts5", both, parallel=False)) == 28.0
    assert arms_ms(stages, Arms("fts5", (), parallel=False)) == 13.0
    assert arms_ms(stages, Arms(None, both, parallel=False)) == 15.0


@pytest.mark.parametrize(("dataset", "synthetic", "limit", "says"), [
    (None, None, None, "give a BEIR folder .* to measure, or --synthetic"),
    (Path("x"), "10k", None, "not both"),
    (Path("x"), None, 0, "--limit: must be >= 1"),
])
def test_bench_arguments_are_checked_before_anything_runs(
    dataset: Path | None, synthetic: str | None, limit: int | None, says: str
) -> None:
    from rich.console import Console

    from octomem.benchmarks.entry import main

    with pytest.raises(OctomemError, match=says):
        main(dataset=dataset, combos=None, split="test", group_by=None, out=None, top_k=100,
             cache_dir=None, limit=limit, synthetic=synthetic, config_file=None, overrides={},
             console=Console())
