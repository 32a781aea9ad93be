"""The permanent fault suite (issue 13): random argument objects against a live stdio
server, kill -9 in the middle of an ingest, and two MCP servers plus the CLI writing one
project at once. Bounded so that it runs in CI in about a minute (100 random calls);
a heavier run sets ``FAULT_EXAMPLES``, e.g. ``FAULT_EXAMPLES=3000 pytest
tests/test_fault_suite.py``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw
import pytest
from cli_run import OCTOMEM, octomem
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp_stdio import SyncClient, stdio_client

pytestmark = pytest.mark.slow

TOOLS = {
    "remember": ["text", "scope", "kind", "tags", "event_time", "supersedes"],
    "recall": ["query", "scope", "top_k", "kinds", "tags", "since", "until", "as_of",
               "include_superseded", "per", "explain"],
    "forget": ["text_or_id", "scope", "reason"],
    "ingest": ["path_or_text", "scope", "title", "uri", "tags"],
}

#: Times near every edge the calendar has, in and out of range, and things that are not times.
TIMES = st.sampled_from([
    "2025-03-01", "2025-03-01T14:30:00Z", "9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00",
    "9999-12-31", "0001-01-01", "10000-01-01", "yesterday", "2025-02-30", "", " ", "T",
    "2025-03-01T25:00", "+002025-03-01",
])
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=60), TIMES,
    st.sampled_from(["local", "global", "FACT", "HANDOFF", "chunk", "document", "x" * 5000]),
)
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=3)),
    max_leaves=8)


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    """A tool and an argument object: mostly its own names, sometimes others."""
    tool = draw(st.sampled_from(sorted(TOOLS)))
    names = st.one_of(st.sampled_from(TOOLS[tool]), st.sampled_from(["id", "kind", "k", ""]),
                      st.text(max_size=10))
    return tool, draw(st.dictionaries(names, VALUES, max_size=5))


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SyncClient, Path]]:
    tmp = tmp_path_factory.mktemp("fault")
    project = tmp / "project"
    project.mkdir()
    (project / "notes.md").write_text("# Notes\n\nThe omega build uses make.\n")
    with stdio_client(tmp, project) as mcp:
        mcp.ok("remember", text="The omega service runs on port 8443", kind="FACT")
        yield mcp, project


@settings(max_examples=int(os.environ.get("FAULT_EXAMPLES", "100")), deadline=None,
          derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(call=calls())
def test_random_arguments_always_get_an_answer_and_break_nothing(
        live: tuple[SyncClient, Path], call: tuple[str, dict[str, Any]]) -> None:
    mcp, _ = live
    tool, arguments = call
    result = mcp.call(tool, arguments)
    if result.is_error:
        message = result.content[0].text
        assert "\n" not in message and len(message) < 2_000, message
        assert message != f"Error executing tool {tool}", f"a crash on {arguments!r}"
    # whatever was stored, recall, the status and the resources still answer
    after = mcp.ok("recall", query="omega service port")
    assert any("8443" in h["text"] for h in after["hits"])
    mcp.ok("status")
    mcp.read("octomem://memory/local")


def test_after_the_random_calls_export_and_verify_are_clean(
        live: tuple[SyncClient, Path]) -> None:
    mcp, project = live
    env = {"OCTOMEM_DATA_DIR": str(project.parent / "data")}
    lines = octomem(project, "export", "-", **env).out.splitlines()
    assert json.loads(lines[0])["type"] == "octomem-export" and len(lines) >= 2
    assert "8443" in octomem(project, "export", "--format", "md", "-", **env).out
    assert "every row can be shown" in octomem(project, "verify", **env).out
    assert mcp.ok("status")["documents"] >= 1


# ---- kill -9 during ingest --------------------------------------------------------------

def _corpus(folder: Path, files: int) -> None:
    folder.mkdir()
    for i in range(files):
        paragraphs = "\n\n".join(
            f"File {i} paragraph {p}: " + " ".join(f"term{i}x{p}w{w}" for w in range(120))
            for p in range(6))
        (folder / f"doc{i:03}.md").write_text(f"# Document {i}\n\n{paragraphs}\n")


def _integrity(store: Path) -> list[tuple[str, int, int]]:
    conn = apsw.Connection(str(store))
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        return conn.execute(
            "SELECT d.id, count(c.id), max(c.ordinal) FROM documents d "
            "LEFT JOIN chunks c ON c.document_id = d.id GROUP BY d.id").fetchall()
    finally:
        conn.close()


def test_kill_9_during_ingest_leaves_a_consistent_store(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    # 300 files keep the ingest running for seconds after the store passes 200 KB (60
    # could finish first on a quiet fast machine): the kill lands mid-ingest every time
    files = 300
    _corpus(project / "corpus", files)
    env = {**os.environ, "COLUMNS": "200"}
    proc = subprocess.Popen([OCTOMEM, "--set", "pipeline.embedder=hashing",
                             "--set", "retrieval.embed_batch_size=4", "ingest", "corpus"],
                            cwd=project, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    store = project / ".octomem" / "octomem.sqlite3"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (store.exists() and store.stat().st_size > 200_000):
        time.sleep(0.01)
    assert proc.poll() is None, "the ingest ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    rows = _integrity(store)
    for doc_id, chunks, last in rows:  # no half-written document: ordinals 0..n-1, all there
        assert chunks >= 1 and last == chunks - 1, (doc_id, chunks, last)
    octomem(project, "verify")
    again = octomem(project, "ingest", "corpus")  # finishes the job: vectors too
    assert "no vector yet" not in again.err, again.err
    assert len(_integrity(store)) == files
    hits = octomem(project, "search", "term59x5w119", "--json").json()["hits"]
    assert hits and "term59x5w119" in hits[0]["text"]


# ---- two MCP servers and the CLI on one project ----------------------------------------

WRITER = """
import json, sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from mcp_stdio import stdio_client
tmp, project, name, n = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
ids = []
with stdio_client(tmp, project) as mcp:
    for i in range(n):
        ids.append(mcp.ok("remember", text=f"{{name}} wrote fact {{i}} about topic {{i % 5}}",
                          kind="FACT", tags=[name])["id"])
        if i % 4 == 0:
            mcp.ok("recall", query=f"fact {{i}}", top_k=3)
print(json.dumps(ids))
"""


def test_two_mcp_servers_and_the_cli_write_one_project(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    writes = 20
    script = WRITER.format(tests=str(Path(__file__).parent))
    env = {**os.environ, "OCTOMEM_DATA_DIR": str(tmp_path / "data")}
    servers = [subprocess.Popen([sys.executable, "-c", script, str(tmp_path), str(project),
                                 name, str(writes)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)
               for name in ("alpha", "beta")]
    cli_ids = [octomem(project, "add", f"cli wrote fact {i}", "--tag", "cli", "--json",
                       OCTOMEM_DATA_DIR=str(tmp_path / "data")).json()["id"]
               for i in range(10)]
    written = list(cli_ids)
    for proc in servers:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err[-2000:]
        written += json.loads(out.strip().splitlines()[-1])
    assert len(set(written)) == 2 * writes + 10
    exported = octomem(project, "export", "-", OCTOMEM_DATA_DIR=str(tmp_path / "data")).out
    stored = {json.loads(li)["id"] for li in exported.splitlines()[1:]}
    assert set(written) == stored
    for tag, count in (("alpha", writes), ("beta", writes), ("cli", 10)):
        hits = octomem(project, "search", "wrote fact", "--tag", tag, "--top-k", "100",
                       "--json", OCTOMEM_DATA_DIR=str(tmp_path / "data")).json()["hits"]
        assert len(hits) == count
