"""Stopping a server while tool calls run (trial 17 G7), on real server processes.

- ``serve --http``: SIGTERM during an ``ingest`` (the real bundled model, so embedding
  takes seconds): stderr says what the server waits for, the ingest stops at its next
  embedding batch and its client gets the answer (``stopped``), the process ends with no
  traceback; a second SIGTERM ends it at once. What is stored stays: every document,
  the chunks left without a vector counted by ``status``.
- stdio: a client writes five ``remember`` calls and closes stdin: each is answered and
  stored (the SDK cancelled all five and one was stored unanswered).
"""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp_stdio import server_env, structured
from served import Served

pytestmark = [pytest.mark.slow]

URL_LINE = r"MCP over streamable HTTP at (http://\S+/mcp)"
#: Notes ingested: enough that the bundled model embeds for seconds on a 2-core machine.
NOTES = 2500
#: Bound on waits for the server (a hang guard on a loaded machine, not a speed target).
LIMIT_S = 240.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _notes(project: Path) -> None:
    folder = project / "notes"
    folder.mkdir(parents=True)
    for i in range(NOTES):
        (folder / f"n{i:05d}.md").write_text(
            f"# Ticket OPS-{i}\n\nOn day {i % 365} the cluster {i % 17} was restarted "
            f"by operator {i % 11} after alert {100 + i % 900}.\n", encoding="utf-8")


def _stored(project: Path) -> int:
    """Documents committed in the project's store so far (read by another connection)."""
    path = project / ".octomem" / "octomem.sqlite3"
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5) as db:
            return int(db.execute("SELECT count(*) FROM documents").fetchone()[0])
    except sqlite3.OperationalError:  # the schema is being created
        return 0


def _status(tmp_path: Path, embedder: str = "fastembed") -> dict[str, Any]:
    """The local scope's ``status --json``, read by the CLI with the server's settings."""
    octomem = Path(sys.executable).with_name("octomem")
    env = server_env(tmp_path, OCTOMEM_PIPELINE__EMBEDDER=embedder)
    done = subprocess.run([str(octomem), "status", "--json"], cwd=tmp_path / "project",
                          env=env, capture_output=True, text=True, timeout=LIMIT_S)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["scopes"]["local"]


def _serve_and_ingest(tmp_path: Path) -> tuple[Served, str]:
    """Start an HTTP server with the bundled model and the notes in its project."""
    _notes(tmp_path / "project")
    served = Served(tmp_path, "--http", "127.0.0.1:0", OCTOMEM_PIPELINE__EMBEDDER="fastembed")
    url = served.wait_for(URL_LINE).group(1)
    served.wait_for("loaded its model", LIMIT_S)
    return served, url


async def _when_stored(project: Path) -> None:
    """Return once every note is committed (the ingest is embedding then)."""
    with anyio.fail_after(LIMIT_S):
        while _stored(project) < NOTES:
            await anyio.sleep(0.05)


@pytest.mark.anyio
async def test_sigterm_during_an_ingest_answers_it_and_stops_at_a_batch(
        tmp_path: Path) -> None:
    served, url = _serve_and_ingest(tmp_path)
    answer: dict[str, Any] = {}
    try:
        async with Client(url, read_timeout_seconds=LIMIT_S) as client:
            await client.list_tools()  # the output schemas known: nothing asked after the stop

            async def ingest() -> None:
                answer.update(structured(await client.call_tool(
                    "ingest", {"path_or_text": "notes"})))

            async with anyio.create_task_group() as group:
                group.start_soon(ingest)
                await _when_stored(tmp_path / "project")
                served.process.send_signal(signal.SIGTERM)
                line = served.wait_for(r"stopping: waiting for", LIMIT_S).group(0)
        assert served.process.wait(LIMIT_S) == -signal.SIGTERM  # uvicorn re-raises it
    finally:
        served.stop()
    said = "".join(served.stderr)
    assert re.search(r"octomem: stopping: waiting for 1 ingest \(embedding [\d,]+ chunks left\); "
                     r"SIGTERM or Ctrl-C again stops now: what is stored stays, `octomem "
                     r"reindex` embeds the rest", said), said
    assert line and "Traceback" not in said and " ERROR " not in said
    assert answer["counts"]["added"] == NOTES
    left = int(re.search(r"([\d,]+) chunks left without a vector", answer["stopped"])
               .group(1).replace(",", ""))
    assert 0 < left < NOTES and answer["embedded"] == NOTES - left
    assert answer["message"].startswith("stopped early, the server is shutting down")
    local = _status(tmp_path)  # what is stored stays: every document, the vectors it has
    assert (local["documents"], local["chunks"]) == (NOTES, NOTES)
    assert local["chunks_without_vector"] == left


@pytest.mark.anyio
async def test_a_second_sigterm_stops_at_once_and_keeps_what_is_stored(tmp_path: Path) -> None:
    served, url = _serve_and_ingest(tmp_path)
    try:
        async with Client(url, read_timeout_seconds=LIMIT_S) as client:
            await client.list_tools()

            async def ingest() -> None:
                try:
                    await client.call_tool("ingest", {"path_or_text": "notes"})
                except Exception:  # noqa: BLE001 - the server is gone: no answer comes
                    pass

            with anyio.move_on_after(LIMIT_S):
                async with anyio.create_task_group() as group:
                    group.start_soon(ingest)
                    await _when_stored(tmp_path / "project")
                    # two signals at once: the first asks to stop, the second ends it
                    served.process.send_signal(signal.SIGTERM)
                    served.wait_for(r"stopping: waiting for", LIMIT_S)
                    served.process.send_signal(signal.SIGTERM)
                    assert served.process.wait(LIMIT_S) == 128 + signal.SIGTERM
                    group.cancel_scope.cancel()
    except Exception:  # noqa: BLE001 - the client's session ends with the server
        pass
    finally:
        served.stop()
    said = "".join(served.stderr)
    assert re.search(r"octomem: stopping now: 1 ingest \(embedding [\d,]+ chunks left\) not "
                     r"finished; what is stored stays", said), said
    assert "Traceback" not in said
    local = _status(tmp_path)
    assert (local["documents"], local["chunks"]) == (NOTES, NOTES)
    assert local["chunks_without_vector"] > 0  # found by their words; reindex embeds them


def test_stdio_answers_the_calls_read_before_stdin_closed(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    lines += [{"jsonrpc": "2.0", "id": 20 + i, "method": "tools/call", "params": {
        "name": "remember", "arguments": {"text": f"Pipelined statement {i} before EOF"}}}
        for i in range(5)]
    done = subprocess.run(
        [sys.executable, "-m", "octomem.mcp_server", "--project-root", str(project)],
        input="".join(json.dumps(line) + "\n" for line in lines), capture_output=True,
        text=True, env=server_env(tmp_path), timeout=LIMIT_S)
    assert done.returncode == 0, done.stderr
    answers = {m["id"]: m for m in map(json.loads, done.stdout.splitlines())}
    for i in range(5):
        result = answers[20 + i]["result"]
        assert not result["isError"]
        assert result["structuredContent"]["text"] == f"Pipelined statement {i} before EOF"
    assert "Traceback" not in done.stderr and " ERROR " not in done.stderr
    assert re.search(r"octomem: stdin closed: waiting for [1-5] requests? to be answered",
                     done.stderr), done.stderr
    assert _status(tmp_path, "hashing")["documents"] == 5


def test_a_stop_before_the_first_batch_stores_nothing_more(tmp_path: Path) -> None:
    # the engine side alone: a stop already requested stores no transcript and embeds
    # nothing, and the report says what was left undone
    from octomem.engine.memory.facade import open_memory
    from octomem.engine.memory.results import ingest_result
    from octomem.engine.stopping import StopRequest

    project = tmp_path / "project"
    (project / "notes").mkdir(parents=True)
    for i in range(3):
        (project / "notes" / f"n{i}.md").write_text(f"Note {i} about the deploy.\n")
    stop = StopRequest()
    stop.request()
    memory = open_memory(None, {"pipeline": {"embedder": "hashing"}}, project,
                         tmp_path / "global")
    try:
        _, report = memory.ingest("notes", stop=stop)
    finally:
        memory.close()
    result = ingest_result("local", report)
    assert (report.added, report.not_stored) == ([], 3)
    assert result.stopped == ("stopped early, the server is shutting down: 3 documents not "
                              "stored; what is stored stays: ingest the same path again (or "
                              "run `octomem reindex`) to finish")
