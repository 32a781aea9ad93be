"""A statement holding a NUL character is refused, as ingest refuses a file holding one
(trial 13 M1): one line naming where it is, nothing stored, over the API, the CLI and MCP."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_run import octomem
from mcp_stdio import stdio_client

from octomem.engine.errors import InvalidQueryError
from octomem.engine.memory.facade import Memory


def test_remember_refuses_a_nul_and_stores_nothing(memory: Memory) -> None:
    kept = memory.remember("The deploy window is Tuesday").document.id
    with pytest.raises(InvalidQueryError, match=r"^text: a NUL character at character 2; "):
        memory.remember("a\0b")
    hits = memory.recall("deploy window", top_k=10).hits
    assert [h.chunk.document_id for h in hits] == [kept]
    # other control characters stay allowed (an agent may keep terminal output)
    logged = memory.remember("red \x1b[31mERROR\x1b[0m in the build log")
    assert logged.document.text == "red \x1b[31mERROR\x1b[0m in the build log"


def test_cli_add_refuses_a_nul(tmp_path: Path) -> None:
    ran = octomem(tmp_path, "add", "nul\0inside", ok=False)
    assert ran.code == 2
    assert "TEXT: a NUL character at character 4; a statement is text" in ran.err
    assert "no hits" in octomem(tmp_path, "search", "inside").out


@pytest.mark.slow
def test_mcp_remember_refuses_a_nul(tmp_path: Path, project: Path) -> None:
    with stdio_client(tmp_path, project) as client:
        answer = client.call("remember", {"text": "a\u0000b"})
        assert answer.is_error
        assert "text: a NUL character at character 2" in answer.content[0].text
        assert client.ok("status")
