"""``octomem://item/{id}`` fits in what the SDK's own clients take in one message: a long
ingested note (its text plus every chunk: over 1 MiB of JSON) made the streamable-HTTP
client fail with "Server-sent event exceeded the 1048576 byte limit". The item is cut to
``MAX_ANSWER_BYTES``, ``cut`` says what was left out, and every chunk can be read whole by
``scope:chunk_id``. A real server process over HTTP and over stdio, a real SQLite store."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp_stdio import stdio_client, structured
from served import Served

from octomem.engine.memory.facade import open_memory
from octomem.engine.memory.view import item
from octomem.mcp_server.answer_size import MAX_ANSWER_BYTES
from octomem.mcp_server.item_size import CHUNK_PREVIEW, TEXT_PREVIEW, bounded_item, item_bytes

pytestmark = [pytest.mark.slow]

URL_LINE = r"MCP over streamable HTTP at (http://\S+/mcp)"


def long_note(path: Path, lines: int = 9000) -> str:
    """Write a Markdown note of ``lines`` lines of made-up words (~100 bytes each)."""
    pick = random.Random(21)
    body = "\n".join(f"Line {i}: " + " ".join("".join(pick.choices("abcdefghij", k=7))
                                              for _ in range(11)) for i in range(lines))
    text = f"# Long note\n\n{body}\n"
    path.write_text(text, encoding="utf-8")
    return text


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, str]]:
    (tmp_path / "project").mkdir()
    text = long_note(tmp_path / "project" / "long.md")
    server = Served(tmp_path, "--http", "127.0.0.1:0")
    try:
        yield server.wait_for(URL_LINE).group(1), text
    finally:
        server.stop()


def check_cut(read: dict[str, Any], text: str) -> None:
    cut = read["cut"]
    assert cut["max_bytes"] == MAX_ANSWER_BYTES and cut["text_chars"] == len(text)
    assert 0 < cut["text_shown"] < len(text) and read["text"] == text[:cut["text_shown"]]
    assert cut["chunk_texts_cut"] == sum(len(c["text"]) == CHUNK_PREVIEW
                                         for c in read["chunks"]) > 100
    assert all(len(c["text"]) <= CHUNK_PREVIEW for c in read["chunks"])
    assert cut["chunks_left_out"] == 0 and not cut["chunk_cut"]
    assert f"cut after {cut['text_shown']:,} of {len(text):,} characters" in cut["message"]
    assert "octomem://item/local:<chunk_id>" in cut["message"]


@pytest.mark.anyio
async def test_a_long_item_reads_over_the_sdk_http_client(served: tuple[str, str]) -> None:
    url, text = served
    with anyio.fail_after(300):
        async with Client(url, read_timeout_seconds=240) as client:
            done = structured(await client.call_tool("ingest", {"path_or_text": "long.md"}))
        [doc_id] = done["added"]
        # the client of the trial's repro: its SSE events are limited to 1 MiB
        async with streamable_http_client(url) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            whole = (await session.read_resource(f"octomem://item/{doc_id}")).contents[0]
            sent = whole.text  # type: ignore[union-attr]
            got = json.loads(sent)
            middle = got["chunks"][len(got["chunks"]) // 2]
            one = json.loads((await session.read_resource(
                f"octomem://item/local:{middle['chunk_id']}")).contents[0].text)  # type: ignore[union-attr]
    assert len(json.dumps(sent).encode()) <= MAX_ANSWER_BYTES
    check_cut(got, text)
    assert len(got["chunks"]) > 100  # every chunk listed, by its first characters
    # the chunk read by scope:chunk_id is whole, the document's text only its start
    assert one["chunk"]["chunk_id"] == middle["chunk_id"]
    assert len(one["chunk"]["text"]) > CHUNK_PREVIEW  # the chunker joins lines with spaces
    assert " ".join(one["chunk"]["text"].split()) in " ".join(text.split())
    assert one["chunk"]["text"].startswith(middle["text"])
    assert one["text"] == text[:TEXT_PREVIEW] and one["cut"]["text_shown"] == TEXT_PREVIEW
    assert one["cut"]["message"].count("the chunk asked for is under chunk") == 1


def test_a_long_item_reads_over_stdio_and_a_short_one_is_whole(
        tmp_path: Path, project: Path) -> None:
    text = long_note(project / "long.md")
    with stdio_client(tmp_path, project) as mcp:
        [doc_id] = mcp.ok("ingest", path_or_text="long.md")["added"]
        short = mcp.ok("remember", text="Releases go out on Thursdays", kind="DECISION")
        got = json.loads(mcp.read(f"octomem://item/{doc_id}"))
        small = json.loads(mcp.read(f"octomem://item/{short['id']}"))
    check_cut(got, text)
    assert "cut" not in small and small["text"] == "Releases go out on Thursdays"


def test_the_list_of_chunks_is_cut_when_even_it_is_over(tmp_path: Path, project: Path) -> None:
    """A bound so small that the chunks' previews do not fit either: the text goes
    first, then the last chunks; what is left fits and says so."""
    text = long_note(project / "long.md", lines=600)
    memory = open_memory(overrides={"pipeline": {"embedder": "hashing"}},
                         project_root=project, global_root=tmp_path / "global")
    try:
        [doc_id] = memory.ingest(str(project / "long.md"))[1].added
        full = item(memory, doc_id)
    finally:
        memory.close()
    assert item_bytes(full) > 20_000
    out = bounded_item(full, max_bytes=4_000)
    assert item_bytes(out) <= 4_000 and bounded_item(full) is full  # fits 512 KiB as it is
    cut = out.cut  # type: ignore[attr-defined]
    assert out.text == "" and cut.text_shown == 0 and cut.text_chars == len(text)
    assert 0 < len(out.chunks) < len(full.chunks)
    assert cut.chunks_left_out == len(full.chunks) - len(out.chunks)
    assert [c.chunk_id for c in out.chunks] == [c.chunk_id for c in full.chunks][:len(out.chunks)]
    assert f"the last {cut.chunks_left_out:,} chunks are not listed" in cut.message
