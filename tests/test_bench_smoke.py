"""``octomem bench --limit``: a smoke index of the limited queries' documents plus a
fixed random sample (and the report says so); vectors written in batches, so an
interrupted build resumes; progress as lines when not on a terminal; the report's
ingest table lists only the steps its rows used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from octomem.benchmarks import smoke
from octomem.benchmarks.cache import IDS_FILE, VECTORS_FILE, IndexCache
from octomem.benchmarks.command import bench_registry, deep_merge, run_bench
from octomem.benchmarks.dataset import load_dataset
from octomem.benchmarks.partial_vectors import IDS_PART, VECTORS_PART
from octomem.benchmarks.report import write_report
from octomem.engine.cli import app
from octomem.engine.settings import load_settings

HASHING = {"pipeline": {"embedder": "hashing"}}
WORDS = ["river", "mountain", "forest", "desert", "ocean", "valley", "glacier", "meadow",
         "canyon", "island"]


@pytest.fixture
def beir(tmp_path: Path) -> Path:
    """40 documents in two groups, 8 queries each judging one document."""
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    with (folder / "corpus.jsonl").open("w") as fh:
        for i in range(40):
            text = f"notes about the {WORDS[i % 10]} number {i} and the {WORDS[(i * 3) % 10]}"
            fh.write(json.dumps({"_id": f"d{i}", "title": f"Doc {i}", "text": text,
                                 "metadata": {"grp": f"g{i % 2}"}}) + "\n")
    with (folder / "queries.jsonl").open("w") as fh:
        for q in range(8):
            fh.write(json.dumps({"_id": f"q{q}", "text": f"the {WORDS[q]} number {q}",
                                 "metadata": {"grp": f"g{q % 2}"}}) + "\n")
    with (folder / "qrels" / "test.tsv").open("w") as fh:
        fh.write("query-id\tcorpus-id\tscore\n")
        fh.writelines(f"q{q}\td{q}\t1\n" for q in range(8))
    return folder


def test_limit_builds_the_judged_documents_and_a_fixed_sample(
        beir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(smoke, "SAMPLE_DOCUMENTS", 5)
    result = run_bench(beir, ["fts5=fts5"], limit=2, cache_dir=tmp_path / "cache",
                       overrides=HASHING)
    subset = result.dataset.extra["subset"]
    assert (subset["judged"], subset["sampled"], subset["corpus"]) == (2, 5, 40)
    assert {"d0", "d1"} <= set(subset["ids"]) and len(subset["ids"]) == 7
    built = next(iter(result.build.values()))
    assert built["steps"]["storage"]["documents"] == 7  # not 40
    again = smoke.smoke_subset(result.dataset, {})
    assert again["ids"] == subset["ids"]  # the same draw every run (seed 0)
    full = run_bench(beir, ["fts5=fts5"], cache_dir=tmp_path / "cache", overrides=HASHING)
    full_built = next(iter(full.build.values()))
    assert full_built["steps"]["storage"]["documents"] == 40  # its own entry
    assert full_built["root"] != built["root"]
    paths = write_report(result, tmp_path / "report")
    report = paths["markdown"].read_text()
    assert "**Smoke run:** index built from 7 of 40 documents: the 2 judged" in report
    assert json.loads(paths["json"].read_text())["dataset"]["subset"]["sampled"] == 5


def test_limit_with_group_by_samples_the_queries_groups(
        beir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(smoke, "SAMPLE_DOCUMENTS", 6)
    result = run_bench(beir, ["fts5=fts5"], limit=1, group_by="metadata.grp",
                       cache_dir=tmp_path / "cache", overrides=HASHING)
    ids = result.dataset.extra["subset"]["ids"]
    assert len(ids) == 7 and all(int(d[1:]) % 2 == 0 for d in ids)  # q0's group: g0 only


def _cache(beir: Path, tmp_path: Path) -> IndexCache:
    dataset = load_dataset(beir, "test")
    return IndexCache(dataset, bench_registry(),
                      lambda extra: load_settings(None, deep_merge(HASHING, extra)),
                      tmp_path / "cache")


def test_an_interrupted_embedding_resumes_where_it_stopped(
        beir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from octomem.plugins.hashing import embedder as hashing

    overrides = deep_merge(HASHING, {"retrieval": {"embed_batch_size": 8}})
    calls = {"n": 0}
    real = hashing.HashingEmbedder.embed_documents

    def stop_at_the_third(self, texts):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(self, texts)

    dataset = load_dataset(beir, "test")

    def cache_at(folder: str) -> IndexCache:
        return IndexCache(dataset, bench_registry(),
                          lambda extra: load_settings(None, deep_merge(overrides, extra)),
                          tmp_path / folder)

    interrupted = cache_at("cache")
    entry = interrupted.entry("hashing")
    monkeypatch.setattr(hashing.HashingEmbedder, "embed_documents", stop_at_the_third)
    with pytest.raises(KeyboardInterrupt):
        interrupted.ensure_semantic(entry, "sqlite-vec", "hashing")
    assert (entry.root / IDS_PART).stat().st_size == 16 * 8  # two batches of 8 kept
    monkeypatch.setattr(hashing.HashingEmbedder, "embed_documents", real)
    resumed = cache_at("cache")
    entry = resumed.entry("hashing")  # storage is reused, not rebuilt
    resumed.ensure_semantic(entry, "sqlite-vec", "hashing")
    assert resumed.embed_calls == 3  # 24 chunks left of 40, 8 a batch
    assert not (entry.root / VECTORS_PART).exists()
    clean = cache_at("clean")
    clean_entry = clean.entry("hashing")
    clean.ensure_semantic(clean_entry, "sqlite-vec", "hashing")
    for name in (VECTORS_FILE, IDS_FILE):
        assert np.array_equal(np.load(entry.root / name), np.load(clean_entry.root / name))


def test_progress_is_lines_when_not_on_a_terminal_and_report_lists_used_steps(
        beir: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    run_bench(beir, ["bm25=rank-bm25", "fts5=fts5"], cache_dir=cache, overrides=HASHING)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["--set", "pipeline.embedder=hashing", "bench", str(beir),
                                      "--combo", "fts5=fts5", "--cache-dir", str(cache),
                                      "--out", str(out)], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    assert "querying fts5: 0/8 (0%)" in result.output  # lines, not a bar drawn at the end
    assert "querying fts5: 8/8 (100%)" in result.output
    build = json.loads((out / "report.json").read_text())["build"]
    steps = next(iter(build.values()))["steps"]
    assert set(steps) == {"storage", "keyword:fts5"}  # not rank-bm25's, built before
    assert "keyword:rank-bm25" not in (out / "report.md").read_text()


@pytest.mark.slow
def test_bench_writes_nothing_into_home_but_its_own_cache(beir: Path, tmp_path: Path) -> None:
    """ranx (through ir_datasets) and matplotlib keep their caches under octomem's bench
    cache, so a run leaves nothing in the home folder that the README does not list."""
    home = tmp_path / "home"
    home.mkdir()
    env = {key: value for key, value in os.environ.items()
           if not key.startswith("XDG_") and key not in ("IR_DATASETS_HOME", "MPLCONFIGDIR")}
    result = subprocess.run(
        [sys.executable, "-c", "from octomem.engine.cli import main; main()",
         "--set", "pipeline.embedder=hashing", "bench", str(beir), "--combo", "fts5=fts5",
         "--cache-dir", str(tmp_path / "cache"), "--out", str(tmp_path / "out")],
        env={**env, "HOME": str(home)}, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / "report.md").exists()
    assert sorted(p.name for p in home.iterdir()) == [".cache"]
    assert sorted(p.name for p in (home / ".cache").iterdir()) == ["octomem"]
    assert {p.name for p in (home / ".cache" / "octomem" / "bench").iterdir()} <= {
        "ir_datasets", "matplotlib"}


LONG = "keyword-and-semantic-hybrid-with-the-conversation-reranker-on-top"


def test_every_phase_says_so_when_piped_and_row_names_are_never_cut(
        beir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["--set", "pipeline.embedder=hashing", "bench", str(beir),
                                      "--combo", f"{LONG}=fts5+sqlite-vec", "--combo",
                                      "fts5=fts5", "--cache-dir", str(tmp_path / "cache"),
                                      "--out", str(out)], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    phases = ["embedding with hashing: 40/40 (100%)", f"warming {LONG} ...",
              f"warming {LONG}: done", f"querying {LONG}: 8/8 (100%)",
              f"timing {LONG} (top 10): 8/8 (100%)", "warming fts5: done",
              "timing fts5 (top 10): 0/8 (0%)", "evaluating 2 rows (", "evaluating 2 rows (",
              "writing the report and its plots to"]
    at, start = [], 0
    for phase in phases:  # each phase in the order it ran (evaluating: begun, then done)
        found = [i for i in range(start, len(lines)) if lines[i].startswith(phase)]
        assert found, (phase, result.output)
        at.append(found[0])
        start = found[0] + 1
    assert lines[at[7]].endswith(") ...") and ": done, " in lines[at[8]], result.output
    header = next(i for i, line in enumerate(lines) if line.startswith("row "))
    table = lines[header:header + 6]
    assert table[2] == LONG  # whole, on a line of its own (it is wider than its column)
    assert table[3].split()[:3] == ["1.0000", "1.0000", "1.0000"]  # its numbers under it
    assert table[4].split()[0] == "fts5" and table[4].split()[4] == "baseline"
    assert all(len(line) <= 80 for line in table) and "…" not in result.output


def test_a_row_name_wider_than_the_line_is_folded_whole() -> None:
    from octomem.benchmarks.summary import table_lines

    numbers = ["0.5000", "0.9000", "0.4000", "baseline", "1.00", "2.00"]
    lines = table_lines("t", [(LONG, numbers), ("bm25", numbers)], 30)
    folded = lines[3:3 + -(-len(LONG) // 30)]
    assert "".join(folded) == LONG and all(len(x) <= 30 for x in folded)
    assert lines[-1].startswith("bm25") and lines[-1].split()[1:] == numbers
