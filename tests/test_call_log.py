"""The opt-in call log (``OCTOMEM_CALL_LOG=1``): summaries in the scope's own SQLite file,
never a text; ``octomem log tail`` and ``octomem metrics`` print them."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import apsw
import pytest
from cli_run import octomem
from mcp import Client
from typer.testing import CliRunner

from octomem.engine.cli import app
from octomem.engine.cli.observe import CALL_OUTCOMES, bucket_quantile
from octomem.mcp_server.calllog import summarise
from octomem.mcp_server.http import parse_address
from octomem.mcp_server.metrics_http import MetricsServer
from octomem.mcp_server.observe import OUTCOMES
from octomem.mcp_server.server import create_server, new_observer

pytestmark = pytest.mark.anyio

SECRET = "The staging database password rotates on Fridays"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def serve_some_calls(data_dir: Path, project: Path, call_log: bool) -> None:
    server = create_server(overrides={"data_dir": str(data_dir), "call_log": call_log,
                                      "pipeline": {"embedder": "hashing"}},
                           project_root=project, observer=new_observer())
    async with Client(server) as client:
        stored = await client.call_tool("remember", {"text": SECRET, "kind": "FACT",
                                                     "tags": ["ops", "db"]})
        await client.call_tool("remember", {"text": "The user likes tea", "scope": "global",
                                            "kind": "PREFERENCE"})
        await client.call_tool("recall", {"query": "when does the password rotate",
                                          "top_k": 3, "kinds": ["FACT"]})
        await client.call_tool("forget", {"text_or_id": "no statement says this"})
        await client.call_tool("forget", {"text_or_id": stored.structured_content["id"]})
        await client.call_tool("status", {})
    # leaving the client ends the server's lifespan: the queued calls are written


def tail(data_dir: Path, project: Path, *args: str) -> list[dict]:
    result = CliRunner().invoke(app, ["--data-dir", str(data_dir), "--project-root",
                                      str(project), "log", "tail", "--json", *args])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.output.splitlines() if line.strip()]


async def test_calls_are_logged_in_their_scope_without_any_text(
    data_dir: Path, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    await serve_some_calls(data_dir, project, call_log=True)
    calls = tail(data_dir, project)
    assert [(c["tool"], c["outcome"], c["scope"]) for c in calls] == [
        ("remember", "ok", "local"), ("remember", "ok", "global"), ("recall", "ok", "local"),
        ("forget", "error", "local"), ("forget", "ok", "local"), ("status", "ok", "local")]
    remember, _, recall, _, forget, _ = calls
    assert remember["arguments"] == {"kind": "FACT", "text_chars": len(SECRET),
                                     "tags_count": 2}
    assert recall["arguments"] == {"kinds": ["FACT"], "query_chars": 29, "top_k": 3}
    assert recall["hits"] == 1 and recall["ids"] == [remember["ids"][0]]
    assert forget["arguments"] == {"id": remember["ids"][0]}
    assert all(c["latency_ms"] > 0 and c["at"].endswith("Z") for c in calls)
    assert [c["tool"] for c in tail(data_dir, project, "-n", "2")] == ["forget", "status"]
    assert [c["tool"] for c in tail(data_dir, project, "--scope", "global")] == ["remember"]
    for path in (project / ".octomem" / "octomem.sqlite3", data_dir / "octomem.sqlite3"):
        rows = apsw.Connection(str(path)).execute("SELECT * FROM call_log").fetchall()
        dumped = json.dumps(rows)
        assert rows and "password" not in dumped and "tea" not in dumped and "rotate" not in dumped


async def test_the_call_log_is_off_by_default(data_dir: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    await serve_some_calls(data_dir, project, call_log=False)
    assert tail(data_dir, project) == []
    result = CliRunner().invoke(app, ["--data-dir", str(data_dir), "--project-root",
                                      str(project), "log", "tail"])
    assert "OCTOMEM_CALL_LOG=1" in result.output


def test_arguments_pass_an_allowlist() -> None:
    assert summarise("recall", {"query": "secret words", "scope": "local", "per": "document",
                                "tags": ["x"], "as_of": "2024-01-01", "future": "free text"}) == {
        "query_chars": 12, "scope": "local", "per": "document", "tags_count": 1,
        "as_of": "2024-01-01", "future_chars": 9}
    assert summarise("forget", {"text_or_id": "Forget this sentence", "reason": "old"}) == {
        "text_or_id_chars": 20, "reason_chars": 3}
    assert summarise("ingest", {"path_or_text": "/home/me/notes", "title": "Mine"}) == {
        "path_or_text_chars": 14, "title_chars": 4}
    assert summarise("unknown", {"scope": "local"}) == {"scope_chars": 5}


async def test_octomem_metrics_summarises_a_running_server(data_dir: Path) -> None:
    observer = new_observer()
    server = create_server(overrides={"data_dir": str(data_dir),
                                      "pipeline": {"embedder": "hashing"}}, observer=observer)
    async with Client(server) as client:
        await client.call_tool("remember", {"text": "Metrics are scraped every 15 s"})
        for _ in range(3):
            await client.call_tool("recall", {"query": "how often are metrics scraped"})
    endpoint = MetricsServer(observer.registry, parse_address("127.0.0.1:0", "x"))
    try:
        addr = f"127.0.0.1:{endpoint.port}"
        table = CliRunner().invoke(app, ["metrics", "--addr", addr])
        raw = CliRunner().invoke(app, ["metrics", "--addr", addr, "--raw"])
    finally:
        endpoint.close()
    assert table.exit_code == 0, table.output
    recall_row = next(line for line in table.output.splitlines() if line.strip().startswith(
        "recall"))
    assert recall_row.split()[1:5] == ["3", "0", "0", "0"]  # ok, error, invalid, cancelled
    assert "mean hits" in table.output and "fts5" in table.output
    # one remember call: its p50 and p95 are its own time, the mean (trial 10: the bucket's
    # interpolation showed p50 17.5 and p95 24.2 ms beside a mean of 12.1 ms)
    remember_row = next(line for line in table.output.splitlines()
                        if line.strip().startswith("remember")).split()
    assert remember_row[1:5] == ["1", "0", "0", "0"] and remember_row[5] == remember_row[6] \
        == remember_row[7]
    assert any(line.split()[:5] == ["tool", "ok", "error", "invalid", "cancelled"]
               for line in table.output.splitlines())  # the columns' header
    assert CALL_OUTCOMES == OUTCOMES  # the CLI's columns are every outcome the server counts
    assert "one call's are its own time" in " ".join(table.output.split())
    assert 'octomem_tool_calls_total{outcome="ok",tool="recall"} 3.0' in raw.output
    gone = CliRunner().invoke(app, ["metrics", "--addr", addr])
    assert gone.exit_code != 0 and "serve --metrics-addr" in str(gone.exception)


def test_bucket_quantile_interpolates_like_histogram_quantile() -> None:
    buckets = [(0.01, 2.0), (0.1, 6.0), (1.0, 8.0), (math.inf, 8.0)]
    assert bucket_quantile(buckets, 0.5) == pytest.approx(0.01 + 0.09 * (4 - 2) / 4)
    assert bucket_quantile(buckets, 0.25) == pytest.approx(0.01)
    assert bucket_quantile([(0.1, 0.0), (math.inf, 3.0)], 0.5) == 0.1
    assert math.isnan(bucket_quantile([(0.1, 0.0), (math.inf, 0.0)], 0.5))


async def test_log_tail_at_80_columns_breaks_no_entry(data_dir: Path, tmp_path: Path) -> None:
    """A table too wide for the console (its cells would wrap inside a time or an
    argument) becomes one entry per call, its arguments broken only between two."""
    project = tmp_path / "project"
    project.mkdir()
    await serve_some_calls(data_dir, project, call_log=True)
    common = ("--data-dir", str(data_dir), "log", "tail")
    lines = octomem(project, *common, COLUMNS="80").out.splitlines()
    assert all(len(line) <= 80 and line == line.rstrip() for line in lines), lines
    head = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z  (local|global)  (\w+)  "
                      r"(ok|error)  \d+\.\d ms(  \d+ hits?)?$")
    heads = [i for i, line in enumerate(lines) if head.match(line)]
    assert [head.match(lines[i])[2] for i in heads] == [
        "remember", "remember", "recall", "forget", "forget", "status"]
    recall = heads[2]
    assert lines[recall].endswith(" ms  1 hit") and "  local  recall  ok  " in lines[recall]
    assert lines[recall + 1] == '  arguments: kinds=["FACT"] query_chars=29 top_k=3'
    assert re.fullmatch(r"  ids: [0-9a-f]{8}", lines[recall + 2])
    assert lines[heads[3] + 1] == "  arguments: text_or_id_chars=22"
    assert heads[5] == len(lines) - 1  # status: no arguments, no ids
    narrow = octomem(project, *common, COLUMNS="40").out.splitlines()
    first = narrow[1:narrow.index(next(n for n in narrow if n.startswith("  ids: ")))]
    assert first == ['  arguments: kind="FACT" tags_count=2', "    text_chars=48"]
    wide = octomem(project, *common, COLUMNS="200").out.splitlines()
    assert "time (UTC)" in wide[1] and "arguments" in wide[1]
    assert any(re.search(r"\.\d{3}Z +local +recall +ok .*kinds=\[\"FACT\"\] query_chars=29 "
                         r"top_k=3", line) for line in wide)
