"""With this embedder, relevance comes from words only, and ``status`` says so (trial 19 K5).

octomem's relevance weights use a hit's cosine only for the model they were fitted with
(the bundled MiniLM): with ``model2vec`` the keyword-only weights apply, so a right answer
stored in other words comes back ``low``. That was said only in a code docstring; now the
CLI's ``status`` (text and ``--json``) and the MCP ``status`` tool say it, and an answer
that abstained or holds only ``low`` hits has a ``warnings`` entry saying it. Everything here
runs the real default model (PyPI ``tokenlearn-static-model``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client
from typer.testing import CliRunner

from octomem.engine.cli import app
from octomem.mcp_server.server import create_server

MEMORY = ("The user lives in Lisbon", "The team standup is at 10:30 every weekday",
          "The user prefers tea over coffee", "Production runs PostgreSQL 16",
          "The user's dog is called Biscuit")
WORDS_ONLY = ("words only: the relevance weights are fitted to the cosines of "
              "fastembed:all-MiniLM-L6-v2-int8 and the embedder model2vec has none, so a hit "
              "is judged by the query's words it holds: an answer stored in other words "
              "comes back low or not at all")

WARNING = ("relevance from words only: the relevance weights are not fitted for the embedder "
           "model2vec (octomem status says so), so an answer stored in other words than the "
           "query's can come back low or not at all; read the hits, or ask with other words")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _run(*args: str) -> str:
    out = CliRunner().invoke(app, list(args), env={"COLUMNS": "300"})
    assert out.exit_code == 0, out.output
    return out.stdout


def test_status_says_relevance_is_from_words_only_and_a_right_answer_is_low(
        tmp_path: Path) -> None:
    data = ["--data-dir", str(tmp_path / "data")]
    m2v = ["--set", "pipeline.embedder=model2vec"]
    for text in MEMORY:
        _run(*data, *m2v, "add", text, "--scope", "global")
    answer = json.loads(_run(*data, *m2v, "search", "where does the user live?", "--json",
                             "--explain"))
    best = answer["hits"][0]
    assert best["text"] == "The user lives in Lisbon" and best["band"] == "low"
    assert "sqlite-vec" in best["arms"] and best["relevance_from"]["cos"] is None
    assert {h["band"] for h in answer["hits"]} == {"low"} and answer["warnings"] == [WARNING]
    # an answer that passes its floor needs no warning
    answer = json.loads(_run(*data, *m2v, "search", "which database runs in production?",
                             "--json"))
    assert answer["hits"][0]["text"] == "Production runs PostgreSQL 16"
    assert answer["hits"][0]["band"] != "low" and answer["warnings"] == []
    scope = json.loads(_run(*data, *m2v, "status", "--json"))["scopes"]["global"]
    assert scope["relevance"] == WORDS_ONLY
    assert scope["chunks_without_vector"] == 0  # every chunk has its model2vec vector
    shown = " ".join(_run(*data, *m2v, "status").split())
    assert f"relevance from {WORDS_ONLY}" in shown
    # the bundled embedder's cosines are the ones fitted on (status loads no model)
    scope = json.loads(_run(*data, "--set", "pipeline.embedder=fastembed", "status",
                            "--json"))["scopes"]["global"]
    assert scope["relevance"] == ("words and meaning (the relevance weights are fitted to "
                                  "fastembed:all-MiniLM-L6-v2-int8)")
    # a scope with no store yet says it as configured
    local = json.loads(_run(*data, *m2v, "status", "--json"))["scopes"]["local"]
    assert local["exists"] is False and local["relevance"] == WORDS_ONLY


@pytest.mark.anyio
async def test_the_mcp_status_tool_says_it(tmp_path: Path) -> None:
    server = create_server(overrides={"data_dir": str(tmp_path / "data"),
                                      "pipeline": {"embedder": "model2vec"}},
                           project_root=tmp_path)
    async with Client(server, read_timeout_seconds=120) as client:
        stored = await client.call_tool("remember", {"text": MEMORY[0], "scope": "global"})
        assert not stored.is_error, stored.content
        status = await client.call_tool("status", {})
        assert not status.is_error, status.content
        assert status.structured_content is not None
        assert status.structured_content["relevance"] == WORDS_ONLY
        assert status.structured_content["embedder_model"].startswith("model2vec:")
        text = "".join(getattr(block, "text", "") for block in status.content)
        assert json.loads(text)["relevance"] == WORDS_ONLY  # what the agent's model reads
        recalled = await client.call_tool("recall", {"query": "where does the user live?"})
        assert not recalled.is_error, recalled.content
        assert recalled.structured_content is not None
        assert recalled.structured_content["hits"][0]["band"] == "low"
        text = "".join(getattr(block, "text", "") for block in recalled.content)
        assert json.loads(text)["warnings"] == [WARNING]
