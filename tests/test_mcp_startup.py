"""The MCP start-up benchmark: what the server imports first, the report, one real run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from octomem.benchmarks.mcp_startup import StartupRun, cpu_seconds, measure_once
from octomem.benchmarks.mcp_startup_report import STEPS, summarise, write_report

#: Libraries the embedder and the storage need, which ``initialize`` and ``tools/list`` don't.
MODEL_AND_STORAGE_LIBRARIES = ("numpy", "onnxruntime", "onnx", "fastembed", "tokenizers",
                               "apsw", "sqlite_vec")


def test_the_server_module_imports_no_model_or_storage_library() -> None:
    """They load on the loader thread, after the server has started answering."""
    code = ("import sys, octomem.mcp_server.server, octomem.mcp_server.__main__; "
            f"print([m for m in {MODEL_AND_STORAGE_LIBRARIES!r} if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def run(mode: str, *seconds: float, cpu: float = 0.5) -> StartupRun:
    return StartupRun(mode, dict(zip(STEPS, seconds, strict=False)), {"tools/list": cpu})


def test_summary_takes_median_and_max_per_mode_and_step() -> None:
    runs = [run("cold", 0.7, 0.71, 3.0, 3.1, cpu=0.6), run("cold", 0.9, 0.92, 2.0, 2.2, cpu=0.7),
            run("cold", 0.8, 0.81, 4.0, 4.4, cpu=0.8), run("fill", 5.0, 5.0, 5.0, 5.0),
            run("warm", 0.6, 0.62)]  # this run never answered recall or remember
    summary = summarise(runs)
    assert set(summary) == {"cold", "warm"}  # the untimed cache fill is left out
    assert summary["cold"]["tools/list"] == {"median_s": 0.81, "max_s": 0.92, "n": 3,
                                             "cpu_median_s": 0.7}
    assert summary["cold"]["recall"] == {"median_s": 3.0, "max_s": 4.0, "n": 3}
    assert summary["warm"]["initialize"]["median_s"] == 0.6
    assert "recall" not in summary["warm"]


def test_report_table_and_verdict(tmp_path: Path) -> None:
    runs = [run("cold", 0.7, 0.71, 3.0, 3.1, cpu=0.6), run("cold", 0.9, 1.02, 2.0, 2.2),
            run("warm", 0.6, 0.62, 0.9, 0.95)]
    runs[1].errors["recall"] = "the embedding model is still loading after 120 s"
    json_path, md_path = write_report(runs, tmp_path / "mcp", label="test", load=(1.5, 2.25))
    markdown = md_path.read_text()
    assert "| cold | 2 | 800 / 900 | 865 / 1,020 | 2,500 / 3,000 | 2,650 / 3,100 | 550 |" \
        in markdown
    assert "| warm | 1 | 600 / 600 | 620 / 620 | 900 / 900 | 950 / 950 | 500 |" in markdown
    assert "NOT met (max 1.020 s)" in markdown and "load average 1.5 before, 2.25 after" \
        in markdown
    assert "1 run(s) reported errors" in markdown
    data = json.loads(json_path.read_text())
    assert data["summary"]["cold"]["tools/list"] == {"median_s": 0.865, "max_s": 1.02, "n": 2,
                                                     "cpu_median_s": 0.55}
    assert data["summary"]["cold"]["initialize"] == {"median_s": 0.8, "max_s": 0.9, "n": 2}
    assert [r["errors"] for r in data["runs"]] == [{}, {"recall": runs[1].errors["recall"]}, {}]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_cpu_seconds_reads_a_live_process() -> None:
    before = cpu_seconds(os.getpid())
    assert before is not None and before > 0
    sum(range(2_000_000))
    assert cpu_seconds(os.getpid()) >= before


@pytest.mark.slow
def test_one_measured_start_answers_every_step_in_order(tmp_path: Path) -> None:
    measured = measure_once("cold", tmp_path / "home", tmp_path / "work",
                            extra_env={"OCTOMEM_PIPELINE__EMBEDDER": "hashing"})
    assert measured.errors == {}
    times = [measured.seconds[s] for s in STEPS]
    assert times == sorted(times) and times[0] > 0
    assert measured.semantic_available is True
    assert (tmp_path / "work" / "project" / ".octomem").is_dir()  # remember wrote locally
