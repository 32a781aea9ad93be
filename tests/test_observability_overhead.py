"""The observability-cost benchmark, on a tiny BEIR folder with the hashing embedder: both
parts run and the report carries their numbers."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from bench_data import write_beir

from octomem.benchmarks.observability_overhead import main

pytestmark = pytest.mark.slow


def test_the_benchmark_reports_the_observer_cost_and_both_recall_sides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OCTOMEM_PIPELINE__EMBEDDER", "hashing")
    data = write_beir(tmp_path / "beir")
    out = tmp_path / "report"
    try:
        assert main(["--out", str(out), "--data", str(data), "--docs", "6", "--queries", "4",
                     "--calls", "50"]) == 0
    finally:
        logging.basicConfig(force=True)  # the benchmark configured the root logger
    report = json.loads((out / "report.json").read_text())
    for variant in ("metrics", "metrics + log line", "metrics + log line + call log"):
        cost = report["observer_us"][variant]
        assert cost["n"] == 50 and 0 < cost["p50"] <= cost["p95"]
    for run in ("recall_ms", "recall_ms_a_a"):
        assert report[run]["plain"]["n"] == 4 and report[run]["observed"]["p50"] > 0
        for difference in ("paired_difference_ms", "paired_cpu_difference_ms"):
            assert report[run][difference]["n"] == 4
            assert report[run][difference]["standard_error"] >= 0
    assert "A/A: the machine's noise" in (out / "report.md").read_text()
