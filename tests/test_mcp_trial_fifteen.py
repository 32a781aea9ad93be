"""Trial 15 F19, over a real MCP client on stdio: ``ingest`` of a pasted text with
``format: "chat"`` was stored as a plain document (the JSON line as its text), with no
word that ``format`` had been ignored."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client
from test_mcp_stdio import call, server_params

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_text_with_a_transcript_format_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    params = server_params(tmp_path, cwd=project, OCTOMEM_PIPELINE__EMBEDDER="hashing")
    line = '{"speaker": "Ana", "text": "hi"}'
    with anyio.fail_after(120):
        async with Client(params, read_timeout_seconds=60) as client:
            for fmt in ("chat", "claude-code"):
                refused = await client.call_tool("ingest", {"path_or_text": line,
                                                            "format": fmt})
                said = " ".join(c.text for c in refused.content if hasattr(c, "text"))
                assert refused.is_error and (
                    f"format: '{fmt}' reads a transcript file or folder, and path_or_text "
                    "names none") in said, said
            stored = await call(client, "ingest", path_or_text=line)  # auto: a text
            assert len(stored["added"]) == 1 and stored["added"][0].startswith("text:")
    assert (project / ".octomem").is_dir()  # created by the last ingest only
