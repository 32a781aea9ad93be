"""``serve`` over stdio with metrics and JSON logs on, as a client starts it: stdout carries
only JSON-RPC, stderr one JSON line per tool call, ``/metrics`` counts the calls."""

from __future__ import annotations

import json
import socket
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from served import OCTOMEM_SERVE, Served
from typer.testing import CliRunner

from octomem.engine.cli import app

pytestmark = pytest.mark.slow

#: The handshake revision a stdio client sends (mcp 2.3's newest, as in the start-up bench).
PROTOCOL_VERSION = "2025-11-25"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rpc(served: Served, request_id: int, method: str, **params: Any) -> dict[str, Any]:
    """Send one request on stdin; return its answer, checking every stdout line on the way."""
    assert served.process.stdin is not None and served.process.stdout is not None
    served.process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": request_id,
                                           "method": method, "params": params}) + "\n")
    served.process.stdin.flush()
    while True:
        line = served.process.stdout.readline()
        assert line, f"stdout closed; stderr:\n{''.join(served.stderr)}"
        message = json.loads(line)  # anything but JSON-RPC on stdout fails here
        assert message["jsonrpc"] == "2.0"
        if message.get("id") == request_id:
            return message


def test_stdio_stdout_is_only_json_rpc_with_metrics_view_and_json_logs(tmp_path: Path) -> None:
    """``octomem serve`` with everything on: metrics, the browser view, JSON logs, the
    call log."""
    served = Served(tmp_path, "--metrics-addr", "127.0.0.1:0", "--log-format", "json",
                    "--ui-port", str(free_port()), stdin=True, command=OCTOMEM_SERVE,
                    OCTOMEM_CALL_LOG="1")
    try:
        metrics_url = served.wait_for(r"metrics at (http://127\.0\.0\.1:\d+/metrics)").group(1)
        view_url = served.wait_for(r"^octomem: browser view on (http://[^\s\"]+)").group(1)
        view_url = view_url.rstrip("/")
        rpc(served, 1, "initialize", protocolVersion=PROTOCOL_VERSION, capabilities={},
            clientInfo={"name": "test", "version": "0"})
        assert served.process.stdin is not None
        served.process.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        for i, text in enumerate(("Backups run at 02:00 UTC", "Backups are kept 30 days")):
            answer = rpc(served, 10 + i, "tools/call", name="remember",
                         arguments={"text": text, "kind": "FACT"})
            assert not answer["result"].get("isError"), answer
        recall = rpc(served, 20, "tools/call", name="recall",
                     arguments={"query": "when do backups run", "top_k": 2})
        assert len(recall["result"]["structuredContent"]["hits"]) == 2

        with urllib.request.urlopen(f"{view_url}/status", timeout=30) as page:
            assert page.status == 200
        with urllib.request.urlopen(metrics_url, timeout=30) as page:
            scrape = {(s.name, tuple(sorted(s.labels.items()))): s.value
                      for f in text_string_to_metric_families(page.read().decode())
                      for s in f.samples}
        assert scrape[("octomem_tool_calls_total", (("outcome", "ok"), ("tool", "remember")))] == 2
        assert scrape[("octomem_tool_calls_total", (("outcome", "ok"), ("tool", "recall")))] == 1
        assert scrape[("octomem_recall_hits_sum", ())] == 2
        assert scrape[("octomem_documents", (("scope", "local"),))] == 2

        served.process.stdin.close()  # a client closing stdin ends the server
        assert served.process.wait(60) == 0
        assert served.process.stdout is not None
        rest = served.process.stdout.read()
        assert all(json.loads(line)["jsonrpc"] == "2.0" for line in rest.splitlines())
    finally:
        served.stop()
    logged = [json.loads(line) for line in served.stderr if line.startswith("{")]
    calls = [entry for entry in logged if entry["logger"] == "octomem.calls"]
    assert [(c["tool"], c["outcome"]) for c in calls] == [
        ("remember", "ok"), ("remember", "ok"), ("recall", "ok")]
    assert calls[-1]["hits"] == 2 and all(c["latency_ms"] > 0 for c in calls)
    assert all(c["level"] == "INFO" and c["ts"].endswith("Z") for c in calls)
    assert all(line.startswith(("{", "octomem: ")) for line in served.stderr), served.stderr
    # the call log was written before the process ended (stdin closed: a prompt exit)
    tail = CliRunner().invoke(app, ["--data-dir", str(tmp_path / "data"), "--project-root",
                                    str(tmp_path / "project"), "log", "tail", "--json"])
    logged_calls = [json.loads(line) for line in tail.output.splitlines()]
    assert [(c["tool"], c["scope"]) for c in logged_calls] == [
        ("remember", "local"), ("remember", "local"), ("recall", "local")]
    assert logged_calls[-1]["arguments"] == {"query_chars": len("when do backups run"), "top_k": 2}
