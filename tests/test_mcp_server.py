"""The MCP server driven through the SDK's in-memory client (real pipeline, hashing embedder)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult
from word_hash_embedder import WORD_HASH_METHODS

from octomem.engine.errors import ArmConfigError
from octomem.mcp_server.server import create_server

pytestmark = pytest.mark.anyio

TOOLS = {"remember", "recall", "forget", "ingest", "status"}
#: What the SDK returns for a crash (an exception that is not an OctomemError).
CRASH = "Error executing tool"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def hashing_overrides(data_dir: Path, **pipeline: Any) -> dict[str, Any]:
    """Settings overrides: a temporary data dir and the deterministic hashing embedder."""
    return {"data_dir": str(data_dir), "pipeline": {"embedder": "hashing", **pipeline}}


@pytest.fixture
def server(data_dir: Path) -> MCPServer:
    return create_server(overrides=hashing_overrides(data_dir))


@pytest.fixture
async def client(server: MCPServer) -> AsyncIterator[Client]:
    async with Client(server, read_timeout_seconds=60) as connected:
        yield connected


def text_of(result: CallToolResult) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


async def ok(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """Call a tool that must succeed; return its structured result."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    return result.structured_content


async def tool_error(client: Client, tool: str, **arguments: Any) -> str:
    """Call a tool that must fail deliberately; return its one-line message."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    message = text_of(result)
    assert message.strip() != CRASH and "Traceback" not in message
    return message


# ---- tools/list -----------------------------------------------------------------------


async def test_lists_the_five_tools_with_teaching_descriptions(client: Client) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool.description and len(tool.description) > 200, tool.name
        assert tool.output_schema is not None, tool.name
    assert "before `remember`" in str(tools["recall"].description)
    assert "`recall` first" in str(tools["remember"].description)
    assert tools["recall"].input_schema["required"] == ["query"]
    recall_hints, forget_hints = tools["recall"].annotations, tools["forget"].annotations
    assert recall_hints is not None and recall_hints.read_only_hint is True
    assert forget_hints is not None and forget_hints.destructive_hint is True
    assert set(tools["recall"].input_schema["properties"]) == {
        "query", "scope", "top_k", "kinds", "tags", "since", "until", "as_of",
        "include_superseded", "per", "explain", "context", "max_tokens",
    }
    assert set(tools["remember"].input_schema["properties"]) == {
        "text", "scope", "kind", "tags", "event_time", "supersedes"
    }
    assert set(tools["forget"].input_schema["properties"]) == {"text_or_id", "scope", "reason"}
    assert set(tools["ingest"].input_schema["properties"]) == {
        "path_or_text", "scope", "title", "uri", "tags", "format", "readd"
    }
    for name in ("remember", "recall", "ingest"):  # what goes where is taught where it matters
        assert "global" in str(tools[name].description) and "local" in str(tools[name].description)
    assert "whatever `top_k`" in str(tools["recall"].description)  # abstention ignores it
    recall = str(tools["recall"].description)  # what an empty answer means, bands, budget
    for taught in ("`abstained`", "`nothing_to_rank`", "`scopes_unavailable`", "high (",
                   "medium (", "low (", "`max_tokens`", "`budget.cut`", "`context: 1`",
                   "neighbouring turns", "`best_rejected`"):
        assert taught in recall, taught
    for tool in tools.values():  # no titles pydantic derives from the argument names
        assert "title" not in tool.input_schema, tool.name
        assert all("title" not in p for p in tool.input_schema["properties"].values())
    # every agent carries the five tools in its context: 13,797 characters before trial
    # 18 H12's cut (~3,500 tokens), 11,209 after (descriptions and input schemas)
    assert sum(len(str(t.description)) + len(json.dumps(t.input_schema, separators=(",", ":")))
               for t in tools.values()) <= 11_500


# ---- remember / recall / forget -------------------------------------------------------


async def test_remember_recall_explain_forget(client: Client) -> None:
    stored = await ok(client, "remember", text="The deploy script lives in ops/deploy.sh",
                      kind="FACT", tags=["ops"])
    assert stored["kind"] == "FACT" and stored["tags"] == ["ops"] and stored["embedded"]
    lower = await ok(client, "remember", text="Staging runs Postgres 16", kind="fact")
    assert lower["kind"] == "FACT"  # a kind is one word in any case, stored in capitals
    assert [h["id"] for h in (await ok(client, "recall", query="staging Postgres",
                                       kinds=["Fact"]))["hits"]] == [lower["id"]]
    await ok(client, "forget", text_or_id=lower["id"])
    await ok(client, "remember", text="The user prefers tabs over spaces")
    await ok(client, "remember", text="Billing runs on the first day of each month")

    answer = await ok(client, "recall", query="where is the deploy script", explain=True)
    top = answer["hits"][0]
    assert top["id"] == stored["id"] and top["rank"] == 1 and top["score"] > 0
    assert set(answer["arms_ran"]) == {"fts5", "sqlite-vec"} and answer["semantic_available"]
    assert set(top["arms"]) >= {"fts5", "sqlite-vec"}
    for arm in top["arms"].values():
        assert arm["rank"] >= 1 and isinstance(arm["score"], float)

    plain = await ok(client, "recall", query="deploy script")
    assert "arms" not in plain["hits"][0] or plain["hits"][0]["arms"] is None

    removed = (await ok(client, "forget", text_or_id=stored["id"]))["forgotten"]
    assert removed["id"] == stored["id"] and removed["text"] == stored["text"]
    after = await ok(client, "recall", query="where is the deploy script")
    assert stored["id"] not in {h["id"] for h in after["hits"]}
    assert (await ok(client, "status"))["documents"] == 2


async def test_recall_filters_by_kinds_and_tags(client: Client) -> None:
    fact = await ok(client, "remember", text="Release notes go in CHANGES.md", kind="FACT",
                    tags=["docs", "release"])
    todo = await ok(client, "remember", text="Write release notes for 2.0", kind="TODO",
                    tags=["release"])
    by_kind = await ok(client, "recall", query="release notes", kinds=["TODO"])
    assert [h["id"] for h in by_kind["hits"]] == [todo["id"]]
    by_tags = await ok(client, "recall", query="release notes", tags=["release", "docs"])
    assert [h["id"] for h in by_tags["hits"]] == [fact["id"]]
    both = await ok(client, "recall", query="release notes", top_k=1)
    assert len(both["hits"]) == 1


async def test_forget_by_exact_text(client: Client) -> None:
    stored = await ok(client, "remember", text="The staging database is db-stage-2")
    removed = await ok(client, "forget", text_or_id="The staging database is db-stage-2")
    assert removed["forgotten"]["id"] == stored["id"]
    assert (await ok(client, "status"))["documents"] == 0


async def test_ambiguous_forget_lists_both_and_removes_none(client: Client) -> None:
    text = "The office wifi password rotates every Monday"
    first = await ok(client, "remember", text=text)
    second = await ok(client, "remember", text=text, scope="global")  # one text, two scopes
    listed = await ok(client, "forget", text_or_id=text)
    assert listed["forgotten"] is None and "none was removed" in listed["message"]
    assert {m["id"] for m in listed["matches"]} == {first["id"], second["id"]}
    assert (await ok(client, "status"))["documents"] == 2
    await ok(client, "forget", text_or_id=second["id"])
    assert (await ok(client, "forget", text_or_id=text))["forgotten"]["id"] == first["id"]


async def test_forget_unknown_is_a_tool_error(client: Client) -> None:
    message = await tool_error(client, "forget", text_or_id="no such memory")
    assert "no such memory" in message


async def test_status_reports_arms_and_model_state(client: Client) -> None:
    status = await ok(client, "status")  # answered at once, whatever the warm-up's state
    assert status["arms"]["embedder"] == "hashing" and status["arms"]["keyword"] == "fts5"
    assert status["semantic_available"] and status["model_state"] in {
        "starting", "loading", "ready"}
    await ok(client, "recall", query="anything")  # waits for the model (a loaded machine)
    status = await ok(client, "status")
    assert status["semantic_available"] and status["model_state"] == "ready"


# ---- bad arguments and hostile queries ------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "arguments", "named"),
    [
        ("recall", {"query": ""}, "query"),
        ("recall", {"query": "   "}, "query"),
        ("recall", {}, "query"),
        ("recall", {"query": "x", "top_k": 0}, "top_k"),
        ("recall", {"query": "x", "top_k": 1001}, "top_k"),
        ("recall", {"query": "x", "top_k": "many"}, "top_k"),
        ("recall", {"query": "x", "kinds": ["a fact"]}, "kinds"),
        ("recall", {"query": "x", "tags": [" "]}, "tags"),
        ("remember", {"text": ""}, "text"),
        ("remember", {"text": "x", "kind": "two words"}, "kind"),
        ("remember", {"text": "x", "kind": "FACT!"}, "kind"),
        ("remember", {"text": "x", "tags": [""]}, "tags"),
        ("forget", {"text_or_id": " "}, "text_or_id"),
        ("recall", {"query": "x", "scope": "both"}, "scope"),
        ("recall", {"query": "x", "as_of": "last tuesday"}, "as_of"),
        ("recall", {"query": "x", "since": "2025-13-01"}, "since"),
        ("remember", {"text": "x", "scope": "team"}, "scope"),
        ("remember", {"text": "x", "event_time": "soon"}, "event_time"),
        ("remember", {"text": "x", "supersedes": "no-such-id"}, "supersedes"),
        ("ingest", {"path_or_text": " "}, "path_or_text"),
    ],
)
async def test_bad_arguments_name_the_argument(
    client: Client, tool: str, arguments: dict[str, Any], named: str
) -> None:
    message = await tool_error(client, tool, **arguments)
    assert named in message
    assert (await ok(client, "status"))["documents"] == 0


HOSTILE = ["state-of-the-art", '"unclosed', "a:b", "NEAR(", "C++", "*", "AND", "(x OR", "^", "'"]


async def test_hostile_queries_give_results(client: Client) -> None:
    await ok(client, "remember", text="C++ templates are state-of-the-art metaprogramming")
    await ok(client, "remember", text="The a:b ratio is 3:1 (see NEAR docs)")
    for query in HOSTILE:
        answer = await ok(client, "recall", query=query)
        assert isinstance(answer["hits"], list), query
    found = await ok(client, "recall", query="state-of-the-art")
    assert found["hits"] and "state-of-the-art" in found["hits"][0]["text"]
    assert "query" in await tool_error(client, "recall", query="")


# ---- settings and assembly errors -----------------------------------------------------


def test_bad_settings_fail_when_the_server_is_created(data_dir: Path) -> None:
    with pytest.raises(ArmConfigError, match=r"retrieval\.top_k"):
        create_server(overrides={"data_dir": str(data_dir), "retrieval": {"top_k": 0}})


async def test_assembly_error_is_a_one_line_tool_error(data_dir: Path) -> None:
    server = create_server(overrides=hashing_overrides(data_dir, keyword="nope"))
    async with Client(server, read_timeout_seconds=60) as client:
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        for tool, arguments in [("status", {}), ("recall", {"query": "x"}),
                                ("remember", {"text": "x"}), ("forget", {"text_or_id": "x"})]:
            message = await tool_error(client, tool, **arguments)
            assert "no keyword arm named 'nope'" in message and "fts5" in message
            assert "\n" not in message


# ---- start-up with a slow or broken model ---------------------------------------------

TEST_EMBEDDERS = '''
import threading, time, zlib
import numpy as np
from octomem.engine.arms import ArmSpec
from octomem.engine.errors import EmbedderUnavailableError
from octomem.engine.hookspecs import hookimpl

LOAD_SECONDS = 1.5


class WordEmbedder:
    """Deterministic 64-d word hashing; ``load`` sleeps (slow) or fails (broken)."""

    dim, max_tokens = 64, 254

    def __init__(self, name):
        self.name, self.model_id = name, f"{name}-test-v1"
        self._lock, self._loaded = threading.Lock(), False

    def load(self):
        with self._lock:
            if self.name == "broken":
                raise EmbedderUnavailableError("broken test model: no weights file")
            if not self._loaded:
                time.sleep(LOAD_SECONDS)
                self._loaded = True
''' + WORD_HASH_METHODS + '''
    def embed_documents(self, texts):
        self.load()
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return np.stack([self._one(t) for t in texts])

    def embed_query(self, text):
        self.load()
        return self._one(text)


@hookimpl
def octomem_register_embedders():
    return [ArmSpec(kind="embedder", name=n, factory=lambda o, c, n=n: WordEmbedder(n))
            for n in ("slow", "broken")]
'''


@pytest.fixture
def test_embedders(install_test_plugin: Callable[[str, str], Path]) -> None:
    install_test_plugin("octomem_test_embedders", TEST_EMBEDDERS)


@pytest.mark.usefixtures("test_embedders")
async def test_tools_list_answers_while_the_model_loads(data_dir: Path) -> None:
    server = create_server(
        overrides=hashing_overrides(data_dir) | {"pipeline": {"embedder": "slow"}})
    async with Client(server, read_timeout_seconds=60) as client:
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        # answered before the 1.5 s load ended (the start-up timing is a benchmark:
        # benchmarks/results/mcp)
        assert (await ok(client, "status"))["model_state"] in {"starting", "loading"}
        answer = await ok(client, "recall", query="anything")  # waits for the model
        assert "nothing is stored" in str(answer), answer  # no store yet, none created (F12)
        status = await ok(client, "status")
        assert status["model_state"] == "ready" and status["model_load_seconds"] >= 1.0
        assert status["semantic_available"] and status["scopes"]["local"]["not_created"]
        await ok(client, "remember", text="The deploy script lives in ci/")
        answer = await ok(client, "recall", query="deploy script")
        assert answer["semantic_available"] and answer["arms_unavailable"] == {}


@pytest.mark.usefixtures("test_embedders")
async def test_a_model_that_cannot_load_leaves_keyword_search(data_dir: Path) -> None:
    server = create_server(
        overrides={"data_dir": str(data_dir), "pipeline": {"embedder": "broken"}})
    async with Client(server, read_timeout_seconds=60) as client:
        stored = await ok(client, "remember", text="Invoices are archived after 90 days")
        assert not stored["embedded"] and "no weights file" in stored["semantic_error"]
        answer = await ok(client, "recall", query="invoices archived")
        assert [h["id"] for h in answer["hits"]] == [stored["id"]]
        assert answer["arms_ran"] == ["fts5"] and not answer["semantic_available"]
        assert "no weights file" in answer["arms_unavailable"]["sqlite-vec (local)"]
        status = await ok(client, "status")
        assert status["model_state"] == "failed" and "no weights file" in status["model_error"]


def test_the_loader_warms_the_semantic_arm_before_the_first_recall(data_dir: Path) -> None:
    from octomem.engine.memory.facade import open_memory
    from octomem.mcp_server.loader import MemoryLoader

    overrides = {"data_dir": str(data_dir), "pipeline": {"embedder": "hashing"}}
    first = open_memory(overrides=overrides)
    first.remember("Invoices are archived after 90 days", scope="global")
    first.close()
    loader = MemoryLoader(lambda: open_memory(overrides=overrides))
    loader.start()
    try:
        memory = loader.memory(warm=True)
        semantic = memory.scopes.require("global").arms.semantic
        matrix = semantic._matrices[semantic.bound.table]
        assert matrix.count == 1 and matrix.seq >= 0  # loaded before anyone searched
        keyword = memory.scopes.require("global").arms.keyword
        loader._run.thread.join(60)  # type: ignore[union-attr]  # then the postings, unawaited
        assert keyword.postings.loaded and keyword.postings.live_rows == 1
        assert [h.chunk.text for h in memory.recall("archived invoices").hits] == [
            "Invoices are archived after 90 days"]
        assert loader.warm_new_scopes() is None  # every open scope is warm
        memory.remember("Receipts are kept for ten years", scope="local")  # a new scope
        thread = loader.warm_new_scopes()
        assert thread is not None
        thread.join(60)
        local = memory.scopes.require("local").arms
        assert local.keyword.postings.loaded and local.keyword.postings.live_rows == 1
        assert local.semantic._matrices[local.semantic.bound.table].count == 1
    finally:
        loader.close(wait_s=10)


@pytest.mark.slow
def test_the_loader_embeds_a_warm_up_query_once_the_model_loads(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from octomem.engine.memory.facade import open_memory
    from octomem.mcp_server.loader import WARM_UP_QUERY, MemoryLoader
    from octomem.plugins.fastembed.embedder import FastembedEmbedder

    embedded: list[str] = []
    embed = FastembedEmbedder.embed_query

    def recording(self, text):  # type: ignore[no-untyped-def]
        embedded.append(text)
        return embed(self, text)

    job = FastembedEmbedder.query_job

    def recording_job(self, text):  # type: ignore[no-untyped-def]
        embedded.append(text)  # a recall's query, run on the calling thread
        return job(self, text)

    monkeypatch.setattr(FastembedEmbedder, "embed_query", recording)
    monkeypatch.setattr(FastembedEmbedder, "query_job", recording_job)
    loader = MemoryLoader(lambda: open_memory(overrides={"data_dir": str(data_dir)}))
    loader.start()
    try:
        memory = loader.memory(warm=True)
        assert embedded == [WARM_UP_QUERY]  # the model's first run, before any recall
        assert loader.model_state()[0] == "ready"
        memory.remember("The deploy script lives in ci/", scope="global")  # a store (F12)
        memory.recall("deploy script")
        assert embedded == [WARM_UP_QUERY, "deploy script"]
    finally:
        loader.close(wait_s=10)
