"""Stopping a server while tool calls run (trial 17 G7), on real server processes.

- ``serve --http``: SIGTERM during an ``ingest``: stderr says what the server waits for,
  the ingest stops at its next embedding batch and its client gets the answer
  (``stopped``), the process ends with no traceback; a second SIGTERM ends it at once.
  What is stored stays: every document, the chunks left without a vector counted by
  ``status``. The embedder holds a chosen batch at a gate the test opens
  (:data:`GATED_EMBEDDER`), so the ingest is inside that batch when each signal arrives:
  with a real model the first batches took milliseconds, and a test process slowed by a
  loaded machine sent its second SIGTERM after the ingest had stopped (CI, load 4-5).
- stdio: a client writes five ``remember`` calls and closes stdin: each is answered and
  stored (the SDK cancelled all five and one was stored unanswered).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_stdio import server_env, structured
from served import Served
from word_hash_embedder import WORD_HASH_METHODS

pytestmark = [pytest.mark.slow]

URL_LINE = r"MCP over streamable HTTP at (http://\S+/mcp)"
#: Notes ingested: several embedding batches (8, 16, 32, ... chunks: writes.ramped).
NOTES = 300
#: Bound on waits for the server (a hang guard on a loaded machine, not a speed target).
LIMIT_S = 240.0

#: An embedder whose n-th ``embed_documents`` call (counted in the server process) stops at
#: a gate when ``$TEST_GATE_DIR/hold-<n>`` exists: it creates ``entered-<n>`` and waits for
#: ``release-<n>``. The ingest is then inside that batch for as long as the test wants.
GATED_EMBEDDER = '''
import itertools, os, time, zlib
from pathlib import Path
import numpy as np
from octomem.engine.arms import ArmSpec
from octomem.engine.hookspecs import hookimpl

CALLS = itertools.count(1)


class GatedEmbedder:
    dim, max_tokens, name, model_id = 64, 254, "gated", "gated-stop-test-v1"

    def load(self):
        pass
''' + WORD_HASH_METHODS + '''
    def embed_documents(self, texts):
        call, gate = next(CALLS), Path(os.environ["TEST_GATE_DIR"])
        if (gate / f"hold-{call}").exists():
            (gate / f"entered-{call}").touch()
            deadline = time.monotonic() + 300
            while not (gate / f"release-{call}").exists() and time.monotonic() < deadline:
                time.sleep(0.02)
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return np.stack([self._one(t) for t in texts])

    def embed_query(self, text):
        return self._one(text)


@hookimpl
def octomem_register_embedders():
    return [ArmSpec(kind="embedder", name="gated", factory=lambda o, c: GatedEmbedder())]
'''


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def gate(tmp_path: Path, install_test_plugin: Callable[[str, str], Path]) -> Iterator[Path]:
    """The gated embedder installed, and its gate folder (every batch released after)."""
    install_test_plugin("octomem_test_stop_gate", GATED_EMBEDDER)
    folder = tmp_path / "gate"
    folder.mkdir()
    yield folder
    for hold in folder.glob("hold-*"):
        (folder / hold.name.replace("hold-", "release-")).touch()


def _notes(project: Path) -> None:
    folder = project / "notes"
    folder.mkdir(parents=True)
    for i in range(NOTES):
        (folder / f"n{i:05d}.md").write_text(
            f"# Ticket OPS-{i}\n\nOn day {i % 365} the cluster {i % 17} was restarted "
            f"by operator {i % 11} after alert {100 + i % 900}.\n", encoding="utf-8")


def _status(tmp_path: Path, embedder: str = "gated") -> dict[str, Any]:
    """The local scope's ``status --json``, read by the CLI with the server's settings."""
    octomem = Path(sys.executable).with_name("octomem")
    env = server_env(tmp_path, OCTOMEM_PIPELINE__EMBEDDER=embedder,
                     PYTHONPATH=os.environ.get("PYTHONPATH", ""))  # the gated embedder
    done = subprocess.run([str(octomem), "status", "--json"], cwd=tmp_path / "project",
                          env=env, capture_output=True, text=True, timeout=LIMIT_S)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["scopes"]["local"]


def _serve(tmp_path: Path, gate: Path, batch: int) -> tuple[Served, str]:
    """Start an HTTP server with the notes in its project whose ``batch``-th embedding
    batch will wait at ``gate``."""
    _notes(tmp_path / "project")
    (gate / f"hold-{batch}").touch()
    served = Served(tmp_path, "--http", "127.0.0.1:0", OCTOMEM_PIPELINE__EMBEDDER="gated",
                    TEST_GATE_DIR=str(gate))
    return served, served.wait_for(URL_LINE).group(1)


async def _entered(gate: Path, batch: int) -> None:
    """Return once the ingest is inside its ``batch``-th embedding batch (every note is
    stored by then: embedding follows the writes)."""
    with anyio.fail_after(LIMIT_S):
        while not (gate / f"entered-{batch}").exists():
            await anyio.sleep(0.05)


@pytest.mark.anyio
async def test_sigterm_during_an_ingest_answers_it_and_stops_at_a_batch(
        tmp_path: Path, gate: Path) -> None:
    served, url = _serve(tmp_path, gate, batch=2)  # the first batch's vectors are stored
    answer: dict[str, Any] = {}
    try:
        async with Client(url, read_timeout_seconds=LIMIT_S) as client:
            await client.list_tools()  # the output schemas known: nothing asked after the stop

            async def ingest() -> None:
                answer.update(structured(await client.call_tool(
                    "ingest", {"path_or_text": "notes"})))

            async with anyio.create_task_group() as group:
                group.start_soon(ingest)
                await _entered(gate, 2)
                served.process.send_signal(signal.SIGTERM)
                line = served.wait_for(r"stopping: waiting for", LIMIT_S).group(0)
                (gate / "release-2").touch()  # the batch ends; the next one is not begun
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
@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_client_that_never_listed_tools_still_gets_the_stopped_answer(
        tmp_path: Path, gate: Path, mode: str) -> None:
    """Trial 21 F2: the SDK 2.x client, given the ingest's answer, sends ``tools/list`` to
    learn its output schema (never listed before); the stopping server had stopped
    listening and the call ended in ``httpx.ConnectError``. It now answers the listing
    while it finishes its calls, and refuses new tool calls meanwhile."""
    served, url = _serve(tmp_path, gate, batch=2)
    answer: dict[str, Any] = {}
    refused: list[str] = []
    try:
        async with Client(url, read_timeout_seconds=LIMIT_S, mode=mode) as client, \
                Client(url, read_timeout_seconds=LIMIT_S, mode=mode) as other:

            async def ingest() -> None:
                answer.update(structured(await client.call_tool(
                    "ingest", {"path_or_text": "notes"})))

            async with anyio.create_task_group() as group:
                group.start_soon(ingest)
                await _entered(gate, 2)
                served.process.send_signal(signal.SIGTERM)
                served.wait_for(r"stopping: waiting for", LIMIT_S)
                listed = await other.list_tools()  # an open session may still list
                try:
                    await other.call_tool("remember", {"text": "Sent while stopping"})
                except MCPError as exc:
                    refused.append(str(exc))
                (gate / "release-2").touch()
        assert served.process.wait(LIMIT_S) == -signal.SIGTERM
    finally:
        served.stop()
    said = "".join(served.stderr)
    assert "Traceback" not in said and " ERROR " not in said
    assert answer["counts"]["added"] == NOTES
    assert answer["message"].startswith("stopped early, the server is shutting down")
    assert "ingest" in {tool.name for tool in listed.tools}
    assert refused == ["the server is stopping: it answers the calls already running, "
                       "and no new ones"]
    local = _status(tmp_path)
    assert (local["documents"], local["chunks"]) == (NOTES, NOTES)  # no remember stored
    assert local["chunks_without_vector"] == NOTES - answer["embedded"]


@pytest.mark.anyio
async def test_a_second_sigterm_stops_at_once_and_keeps_what_is_stored(
        tmp_path: Path, gate: Path) -> None:
    served, url = _serve(tmp_path, gate, batch=1)  # the ingest never stores a vector
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
                    await _entered(gate, 1)
                    # two signals while the ingest is in its batch: the first asks to
                    # stop, the second ends the process at once
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
    assert re.search(rf"octomem: stopping now: 1 ingest \(embedding {NOTES:,} chunks left\) "
                     r"not finished; what is stored stays", said), said
    assert "Traceback" not in said
    assert served.process.returncode == 128 + signal.SIGTERM
    local = _status(tmp_path)
    assert (local["documents"], local["chunks"]) == (NOTES, NOTES)
    assert local["chunks_without_vector"] == NOTES  # found by their words; reindex embeds them


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
