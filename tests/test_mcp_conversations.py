"""A conversation through the MCP server over stdio, as an agent would use it: ingest a
transcript, recall an answer with the turn it replies to, read the session start."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

BILLING = [
    {"speaker": "Ana", "session": "1", "time": "2025-03-04T09:12:00Z",
     "text": "Which database should the billing service use?"},
    {"speaker": "Ben", "session": "1", "time": "2025-03-04T09:13:00Z",
     "text": "PostgreSQL 16, because invoices need row-level security."},
    {"speaker": "Ana", "session": "2", "time": "2025-03-06T15:00:00Z",
     "text": "Where do the nightly backups go?"},
    {"speaker": "Ben", "session": "2", "time": "2025-03-06T15:02:00Z",
     "text": "To the cold-storage bucket in Frankfurt."},
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def params(tmp_path: Path, project: Path, embedder: str = "hashing") -> StdioServerParameters:
    """How a client starts the server; ``embedder="fastembed"`` for the real MiniLM."""
    home = tmp_path / "home"
    return StdioServerParameters(
        command=sys.executable, args=["-m", "octomem.mcp_server", "--project-root", str(project)],
        env={"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
             "XDG_DATA_HOME": str(home / ".local" / "share"),
             "XDG_CACHE_HOME": str(home / ".cache"), "HF_HUB_OFFLINE": "1",
             "OCTOMEM_DATA_DIR": str(tmp_path / "data"), "OCTOMEM_PIPELINE__EMBEDDER": embedder},
    )


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def test_a_transcript_over_stdio_answers_in_place(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "billing.jsonl").write_text("".join(json.dumps(t) + "\n" for t in BILLING))
    with anyio.fail_after(120):
        async with Client(params(tmp_path, project), read_timeout_seconds=60) as client:
            stored = await call(client, "ingest", path_or_text="billing.jsonl")
            assert stored["added"] == ["billing:0", "billing:1", "billing:2", "billing:3"]
            again = await call(client, "ingest", path_or_text="billing.jsonl", format="chat")
            assert again["added"] == [] and len(again["unchanged"]) == 4
            answer = await call(client, "recall", query="which database does the billing "
                                "service use", context=1, kinds=["TURN"])
            # the answer (turn 1) replies to the question (turn 0): a hit brings the other
            read = [{h["id"], *(c["id"] for c in h.get("context", []))}
                    for h in answer["hits"][:2]]
            assert any({"billing:0", "billing:1"} <= ids for ids in read), answer["hits"]
            top = answer["hits"][0]
            assert top["turn"]["conversation"] == "billing" and top["turn"]["session"] == "1"
            reply = next(c for h in answer["hits"] for c in [h, *h.get("context", [])]
                         if c["id"] == "billing:1")
            assert reply["text"] == "Ben: PostgreSQL 16, because invoices need row-level " \
                "security."
            packed = await call(client, "recall", query="backups Frankfurt bucket",
                                max_tokens=20, kinds=["TURN"])
            assert packed["budget"]["tokens"] <= 20 and len(packed["hits"]) == 1
            assert packed["hits"][0]["id"] == "billing:3"
            assert {c["id"] for c in packed["budget"]["cut"]} <= {f"billing:{i}" for i in
                                                                  range(3)}
            await call(client, "remember", text="Always answer in British English",
                       kind="RULE", scope="global")
            start = (await client.read_resource("octomem://session-start")).contents[0]
            assert "Always answer in British English" in start.text
            assert "PostgreSQL" not in start.text  # turns are recalled, not listed


async def test_something_never_said_gets_an_empty_answer_with_its_reason(
    tmp_path: Path,
) -> None:
    """With the real model: relevance is calibrated on MiniLM's cosines (issue 12)."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "billing.jsonl").write_text("".join(json.dumps(t) + "\n" for t in BILLING))
    with anyio.fail_after(240):
        async with Client(params(tmp_path, project, "fastembed"),
                          read_timeout_seconds=180) as client:
            await call(client, "ingest", path_or_text="billing.jsonl")
            answer = await call(client, "recall", query="what is the capital of Mongolia")
            assert answer["hits"] == [] and "retrieval.relevance_floor" in answer["abstained"]
            said = await call(client, "recall", query="where do the nightly backups go",
                              context=1)
            assert said["hits"] and said.get("abstained") is None
