"""Trial 20's small findings: ``Memory.recall`` refuses what the tools refuse (L8)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp_stdio import stdio_client

from octomem.engine.errors import InvalidQueryError
from octomem.engine.memory.facade import open_memory

HASHING = {"pipeline": {"embedder": "hashing"}}

REFUSED: list[dict[str, Any]] = [
    {"tags": [""]}, {"tags": ["billing", "  "]}, {"top_k": 0}, {"top_k": -3},
]


def test_the_python_api_refuses_what_the_mcp_tool_refuses_with_its_words(
        tmp_path: Path) -> None:
    """Trial 20 L8: ``tags=[""]`` answered 0 hits and ``top_k=0`` the default 10 through
    ``Memory.recall`` (docs/python.md: it raises what the tools report as errors)."""
    project = tmp_path / "project"
    project.mkdir()
    with stdio_client(tmp_path, project) as client:
        client.ok("remember", text="The on-call rotation changes on Mondays", tags=["ops"])
        said = [client.error("recall", query="on call", **case) for case in REFUSED]
    memory = open_memory(overrides=HASHING, project_root=project,
                         global_root=tmp_path / "home-global")
    try:
        assert len(memory.recall("on call", top_k=1).hits) == 1  # the store answers
        for case, tool_error in zip(REFUSED, said, strict=True):
            with pytest.raises(InvalidQueryError) as refused:
                memory.recall("on call", **case)
            assert str(refused.value) in tool_error, (case, tool_error)
    finally:
        memory.close()
    assert [m.split(": ", 1)[-1] for m in said] == [
        "tags: a tag is empty; give short non-empty labels"] * 2 + [
        "top_k: must be at least 1, got 0", "top_k: must be at least 1, got -3"]


@pytest.mark.parametrize("argument", ["kinds", "tags"])
def test_a_filter_given_as_one_string_is_refused_not_split_into_letters(
        tmp_path: Path, argument: str) -> None:
    memory = open_memory(overrides=HASHING, project_root=tmp_path,
                         global_root=tmp_path / "global")
    try:
        with pytest.raises(InvalidQueryError, match=rf"^{argument}: must be a list"):
            memory.recall("on call", **{argument: "FACT"})
    finally:
        memory.close()
