"""Metrics (``serve --metrics-addr``): counters and histograms move by the right amounts,
the endpoint is loopback-only and GET-only, and the in-process API the browser view reads."""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

from octomem.engine.cli import app
from octomem.mcp_server.http import AddressError, parse_address
from octomem.mcp_server.metrics_http import MetricsServer
from octomem.mcp_server.observe import Observer, ScopeCollector
from octomem.mcp_server.server import create_server, new_observer

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def observer() -> Observer:
    return new_observer()


@pytest.fixture
async def client(data_dir: Path, tmp_path: Path, observer: Observer) -> AsyncIterator[Client]:
    (tmp_path / "project").mkdir()
    server: MCPServer = create_server(
        overrides={"data_dir": str(data_dir), "pipeline": {"embedder": "hashing"}},
        project_root=tmp_path / "project", observer=observer)
    async with Client(server) as connected:
        yield connected


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of a scrape: (name, labels) -> value."""
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(scrape: dict[Any, float], name: str, **labels: str) -> float:
    return scrape.get((name, frozenset(labels.items())), 0.0)


async def test_counters_and_histograms_move_by_the_right_amounts(
    client: Client, observer: Observer
) -> None:
    before = samples(generate_latest(observer.registry).decode())
    assert value(before, "octomem_tool_calls_total", tool="recall", outcome="ok") == 0
    for text, kind in (("Deploys go through the staging cluster first", "FACT"),
                       ("The user prefers short answers", "PREFERENCE"),
                       ("Staging cluster runs Kubernetes 1.30", "FACT")):
        assert not (await client.call_tool("remember", {"text": text, "kind": kind})).is_error
    found = await client.call_tool("recall", {"query": "staging cluster", "top_k": 2})
    none = await client.call_tool("recall", {"query": "staging", "kinds": ["RULE"]})
    assert len(found.structured_content["hits"]) == 2  # type: ignore[index]
    assert len(none.structured_content["hits"]) == 0  # type: ignore[index]
    stored = await client.call_tool("recall", {"query": "short answers", "top_k": 1})
    gone = stored.structured_content["hits"][0]["id"]  # type: ignore[index]
    assert not (await client.call_tool("forget", {"text_or_id": gone})).is_error
    assert (await client.call_tool("forget", {"text_or_id": "no such statement"})).is_error
    assert (await client.call_tool("recall", {"query": "x", "top_k": 0})).is_error

    scrape = samples(generate_latest(observer.registry).decode())
    assert value(scrape, "octomem_tool_calls_total", tool="remember", outcome="ok") == 3
    assert value(scrape, "octomem_tool_calls_total", tool="recall", outcome="ok") == 3
    refused = [value(scrape, "octomem_tool_calls_total", tool="recall", outcome=outcome)
               for outcome in ("error", "invalid")]  # top_k=0: refused by the tool or the SDK
    assert sum(refused) == 1
    assert value(scrape, "octomem_tool_calls_total", tool="forget", outcome="ok") == 1
    assert value(scrape, "octomem_tool_calls_total", tool="forget", outcome="error") == 1
    assert value(scrape, "octomem_tool_call_duration_seconds_count", tool="recall") == 4
    assert value(scrape, "octomem_tool_call_duration_seconds_bucket", tool="recall",
                 le="+Inf") == 4
    assert 0 < value(scrape, "octomem_tool_call_duration_seconds_sum", tool="recall") < 60
    assert value(scrape, "octomem_recall_hits_count") == 3
    assert value(scrape, "octomem_recall_hits_sum") == 3  # 2 + 0 + 1
    assert value(scrape, "octomem_recall_hits_bucket", le="0.0") == 1
    assert value(scrape, "octomem_recall_empty_total") == 1
    assert value(scrape, "octomem_writes_total", tool="remember", kind="FACT") == 2
    assert value(scrape, "octomem_writes_total", tool="remember", kind="PREFERENCE") == 1
    assert value(scrape, "octomem_writes_total", tool="forget", kind="PREFERENCE") == 1
    # the local scope holds everything; the kinds=["RULE"] recall runs no arm and embeds no
    # query: the stored kinds' counts decide its empty answer (trial 13 M8)
    for arm in ("fts5", "sqlite-vec"):
        assert value(scrape, "octomem_recall_arm_duration_seconds_count", arm=arm,
                     scope="local") == 2
    assert value(scrape, "octomem_embedding_duration_seconds_count", op="query") == 2
    assert value(scrape, "octomem_documents", scope="local") == 2  # forget deletes the text
    assert value(scrape, "octomem_documents_current", scope="local") == 2
    assert value(scrape, "octomem_forgotten", scope="local") == 1
    assert value(scrape, "octomem_pending_vectors", scope="local") == 0
    assert value(scrape, "octomem_storage_bytes", scope="local") > 0
    info = [k for k in scrape if k[0] == "octomem_build_info"]
    assert len(info) == 1 and dict(info[0][1])["version"]


@pytest.fixture
def broken_embedder(install_test_plugin: Callable[[str, str], Path]) -> None:
    """Embedder ``broken``: its model never loads (the MCP server tests' test plugin)."""
    from test_mcp_server import TEST_EMBEDDERS

    install_test_plugin("octomem_test_embedders", TEST_EMBEDDERS)


@pytest.mark.usefixtures("broken_embedder")
async def test_degraded_recall_is_counted(data_dir: Path, tmp_path: Path) -> None:
    observer = new_observer()
    server = create_server(overrides={"data_dir": str(data_dir), "pipeline": {
        "embedder": "broken"}}, project_root=tmp_path, observer=observer)
    async with Client(server) as client:
        await client.call_tool("remember", {"text": "Words only, no vector", "kind": "FACT"})
        answer = await client.call_tool("recall", {"query": "words only"})
    assert answer.structured_content["arms_unavailable"]  # type: ignore[index]
    scrape = samples(generate_latest(observer.registry).decode())
    assert value(scrape, "octomem_recall_degraded_total", arm="sqlite-vec") == 1


async def test_the_in_process_api_the_view_reads(client: Client, observer: Observer) -> None:
    await client.call_tool("remember", {"text": "One statement", "kind": "FACT"})
    for query in ("one", "statement"):
        await client.call_tool("recall", {"query": query})
    recent = observer.recent("recall")
    assert [s.tool for s in recent] == ["recall", "recall"]
    assert all(s.outcome == "ok" and s.hits == 1 and s.latency_ms > 0 for s in recent)
    assert [s.tool for s in observer.recent(limit=3)] == ["remember", "recall", "recall"]
    latency = observer.latency_of("recall")
    assert latency.count == 2 and latency.outcomes["ok"] == 2
    assert latency.buckets[-1] == (float("inf"), 2.0)
    assert latency.sum_seconds == pytest.approx(sum(s.latency_ms for s in recent) / 1e3,
                                                rel=1e-3)
    with pytest.raises(KeyError, match="no tool"):
        observer.latency_of("nope")


@pytest.fixture
def endpoint(observer: Observer) -> Iterator[MetricsServer]:
    server = MetricsServer(observer.registry, parse_address("127.0.0.1:0", "--metrics-addr"))
    try:
        yield server
    finally:
        server.close()


def fetch(url: str, method: str = "GET", host: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, method=method, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, ""




def test_the_endpoint_answers_get_metrics_only(endpoint: MetricsServer) -> None:
    status, text = fetch(endpoint.url)
    assert status == 200 and "octomem_tool_calls_total" in text
    assert endpoint.url.startswith("http://127.0.0.1:")
    for method in ("POST", "PUT", "DELETE", "OPTIONS", "HEAD"):
        assert fetch(endpoint.url, method)[0] == 405, method
    assert fetch(endpoint.url.replace("/metrics", "/"))[0] == 404
    assert fetch(endpoint.url, host=f"evil.example:{endpoint.port}")[0] == 421
    assert fetch(endpoint.url, host=f"localhost:{endpoint.port}")[0] == 200


def test_a_non_loopback_metrics_address_is_refused_at_start(observer: Observer) -> None:
    for address in ("0.0.0.0:9469", "192.168.1.5:9469", "[::]:9469"):
        with pytest.raises(AddressError, match="not a loopback address"):
            MetricsServer(observer.registry, parse_address(address, "--metrics-addr"))
    result = CliRunner().invoke(app, ["serve", "--metrics-addr", "0.0.0.0:9469"])
    assert isinstance(result.exception, AddressError)
    assert "--metrics-addr: 0.0.0.0 is not a loopback address" in str(result.exception)


def test_every_metric_is_documented(observer: Observer) -> None:
    text = (Path(__file__).resolve().parents[1] / "docs" / "observability.md").read_text()
    documented = set(re.findall(r"^\| `(octomem_\w+)` \|", text, re.M))
    suffix = {"counter": "_total", "info": "_info"}
    exported = {family.name + suffix.get(family.type, "")
                for family in observer.registry.collect()}
    assert {name for name, _ in ScopeCollector.GAUGES.values()} <= exported
    assert exported == documented


async def test_recording_never_fails_a_call(observer: Observer,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    answer = {"content": [], "isError": False, "structuredContent": {
        "hits": "not a list", "timings_ms": {"fts5 (local)": "slow", "total": None}}}

    async def call_next(_: object) -> dict[str, object]:
        return answer

    ctx = SimpleNamespace(method="tools/call", params={"name": "recall", "arguments": []})
    assert await observer(ctx, call_next) is answer  # odd shapes are counted, not fatal
    assert observer.recent()[-1].hits == 0

    def broken(*_: object) -> None:
        raise RuntimeError("a bug in the observer")

    monkeypatch.setattr(observer, "record", broken)
    assert await observer(ctx, call_next) is answer


async def test_made_up_tools_and_refused_arguments_count_as_invalid(
    client: Client, observer: Observer, endpoint: MetricsServer
) -> None:
    """A client calling tools the server does not have adds no series (one ``unknown``
    label), and every refusal before a tool ran is ``invalid``, not a tool ``error``."""
    for i in range(40):
        assert (await client.call_tool(f"rand{i}", {})).is_error
    assert (await client.call_tool("recall", {"query": 123})).is_error
    assert (await client.call_tool("recall", {"query": "x", "colour": "red"})).is_error
    assert (await client.call_tool("forget", {"text_or_id": "no such statement"})).is_error
    status, text = fetch(endpoint.url)  # scraped over HTTP, as Prometheus does
    assert status == 200
    scrape = samples(text)
    tools = {dict(labels)["tool"] for name, labels in scrape
             if name == "octomem_tool_calls_total"}
    assert tools == {"remember", "recall", "forget", "ingest", "status", "unknown"}
    assert value(scrape, "octomem_tool_calls_total", tool="unknown", outcome="invalid") == 40
    assert value(scrape, "octomem_tool_calls_total", tool="unknown", outcome="error") == 0
    assert value(scrape, "octomem_tool_calls_total", tool="recall", outcome="invalid") == 2
    assert value(scrape, "octomem_tool_calls_total", tool="recall", outcome="error") == 0
    assert value(scrape, "octomem_tool_calls_total", tool="forget", outcome="error") == 1
    assert "rand" not in text


async def test_status_times_are_iso_like_the_other_tools(client: Client) -> None:
    """``newest_document_at`` is ISO-8601 UTC, as ``created_at`` in a recall hit is."""
    from datetime import datetime

    await client.call_tool("remember", {"text": "Backups run at 02:00 UTC", "kind": "FACT"})
    status = (await client.call_tool("status", {})).structured_content
    newest = status["scopes"]["local"]["newest_document_at"]  # type: ignore[index]
    hit = (await client.call_tool("recall", {"query": "backups"})).structured_content
    created = hit["hits"][0]["created_at"]  # type: ignore[index]
    assert isinstance(newest, str) and datetime.fromisoformat(newest).utcoffset() is not None
    assert newest[:16] == created[:16]
