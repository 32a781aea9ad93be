"""Trial 16 F17, F9: every MCP tool answer fits in what the SDK's own HTTP client takes in
one message (1 MiB a server-sent event). A recall the limits allow (``top_k`` up to 1000)
over a store of long notes is cut from the end to ``MAX_ANSWER_BYTES``, the cut hits in
``budget.cut`` and a ``warnings`` entry; an ingest of many files gives counts and a few ids.
Against a real server process over streamable HTTP, a real SQLite store."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_stdio import structured
from served import Served

from octomem.engine.memory.recall_results import MemoryHit, MemoryRecallResult
from octomem.mcp_server.answer_size import MAX_ANSWER_BYTES, answer_bytes, bounded_recall

pytestmark = [pytest.mark.slow]

URL_LINE = r"MCP over streamable HTTP at (http://\S+/mcp)"
NOTES = 300


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def served_notes(tmp_path: Path) -> Iterator[str]:
    notes = tmp_path / "project" / "notes"
    notes.mkdir(parents=True)
    pick = random.Random(16)
    words = ["".join(pick.choices("bcdfghklmnprstvz", k=6)) for _ in range(NOTES * 400)]
    for i in range(NOTES):  # each ~2.8 KB, every sentence naming the restarted instance
        body = " ".join(f"The restarted instance kept {' '.join(words[k:k + 20])}."
                        for k in range(i * 400, (i + 1) * 400, 20))
        (notes / f"n{i:03}.md").write_text(f"# Restarted instance {i}\n\n{body}\n")
    served = Served(tmp_path, "--http", "127.0.0.1:0",  # every hit kept: no floor, hashing
                    OCTOMEM_RETRIEVAL__RELEVANCE_FLOOR="0",  # embedder (uncalibrated)
                    OCTOMEM_RETRIEVAL__DOCUMENT_RELEVANCE_FLOOR="0",
                    OCTOMEM_RETRIEVAL__RELATIVE_FLOOR="0")
    try:
        yield served.wait_for(URL_LINE).group(1)
    finally:
        served.stop()


@pytest.mark.anyio
async def test_a_large_recall_is_cut_to_fit_the_sdk_http_client(served_notes: str) -> None:
    with anyio.fail_after(300):
        async with Client(served_notes, read_timeout_seconds=240) as client:
            done = structured(await client.call_tool("ingest", {"path_or_text": "notes"}))
        # F9: counts and a few ids, not 300 ids
        assert done["counts"]["added"] == NOTES, done["counts"]
        assert len(done["added"]) == 10 and f"added 10 of {NOTES}" in done["message"], done
        # the client of the trial's repro: its SSE events are limited to 1 MiB
        async with streamable_http_client(served_notes) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool(
                "recall", {"query": "restarted instance disk", "top_k": NOTES})
            answer = structured(result)
            text = result.content[0].text  # type: ignore[union-attr]
    sent = len(text.encode()) + len(str(answer).encode())
    assert sent < 1024 * 1024
    kept, cut = answer["hits"], answer["budget"]["cut"]
    assert kept and cut and len(kept) + len(cut) + answer["weak_left_out"] <= NOTES
    assert answer["budget"]["max_bytes"] == MAX_ANSWER_BYTES
    assert answer["budget"]["max_tokens"] is None
    assert [h["rank"] for h in kept] == list(range(1, len(kept) + 1))
    assert cut[0]["rank"] == len(kept) + 1  # cut from the end
    [said] = [w for w in answer["warnings"] if "left out" in w]
    assert f"{len(cut)} of {len(kept) + len(cut)} hits" in said and "max_tokens" in said


@pytest.mark.anyio
async def test_a_recall_within_the_bound_is_not_touched(served_notes: str) -> None:
    async with Client(served_notes, read_timeout_seconds=240) as client:
        structured(await client.call_tool("ingest", {"path_or_text": "notes"}))
        answer = structured(await client.call_tool(
            "recall", {"query": "restarted instance disk", "top_k": 20}))
        budgeted = structured(await client.call_tool(
            "recall", {"query": "restarted instance disk", "top_k": 20, "max_tokens": 1000}))
    assert answer["budget"] is None and len(answer["hits"]) == 20
    assert not answer["warnings"]
    assert budgeted["budget"]["max_tokens"] == 1000 and budgeted["budget"]["max_bytes"] is None


def test_one_hit_over_the_bound_is_shortened_and_said() -> None:
    hit = MemoryHit(id="file:big", scope="local", chunk_id=1, rank=1, score=1.0,
                    text="word " * 200_000, kind="DOC", current=True)
    answer = MemoryRecallResult(query="word", scopes=["local"], hits=[hit], arms_ran=["fts5"],
                                arms_unavailable={}, semantic_available=False)
    bounded = bounded_recall(answer)
    assert answer_bytes(bounded) <= MAX_ANSWER_BYTES < answer_bytes(answer)
    [kept] = bounded.hits
    assert kept.text.endswith("…") and len(kept.text) > MAX_ANSWER_BYTES // 4
    assert bounded.budget is not None and bounded.budget.truncated == "file:big"
    assert any("octomem://item/local:1 reads its chunk" in w for w in bounded.warnings)
    assert bounded_recall(bounded) == bounded  # within the bound: as it is
