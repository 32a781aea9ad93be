"""``python -m octomem.mcp_server`` started over stdio, as a real MCP client starts it."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp_stdio import structured

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

#: Generous bound for spawn + imports + initialize + tools/list (measured well under it).
STARTUP_LIMIT_S = 10.0
TOOLS = {"remember", "recall", "forget", "ingest", "status"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def server_params(
    tmp_path: Path, *args: str, cwd: Path | None = None, **env: str
) -> StdioServerParameters:
    """How an MCP client would start the server, with every directory inside ``tmp_path``."""
    home = tmp_path / "home"
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "octomem.mcp_server", *args],
        cwd=str(cwd) if cwd else None,
        env={
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "HF_HUB_OFFLINE": "1",
            "OCTOMEM_DATA_DIR": str(tmp_path / "data"),
            **env,
        },
    )


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    return structured(await client.call_tool(tool, arguments))


async def test_stdio_remember_recall_forget(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    params = server_params(tmp_path, cwd=project, OCTOMEM_PIPELINE__EMBEDDER="hashing")
    with anyio.fail_after(120):
        async with Client(params, read_timeout_seconds=60) as client:
            stored = await call(client, "remember", text="The CI pipeline runs on self-hosted "
                                "runners", kind="FACT")
            assert stored["scope"] == "local"
            answer = await call(client, "recall", query="where does CI run", explain=True)
            top = answer["hits"][0]
            assert top["id"] == stored["id"] and top["score"] > 0 and top["scope"] == "local"
            assert {"fts5", "sqlite-vec"} <= set(top["arms"])
            gone = await call(client, "forget", text_or_id=stored["id"], reason="moved to GitHub")
            assert gone["forgotten"]["id"] == stored["id"] and gone["reason"] == "moved to GitHub"
            after = await call(client, "recall", query="where does CI run")
            assert after["hits"] == []
    assert (project / ".octomem").is_dir()  # the global store: only by a write into it (F12)
    assert not (tmp_path / "data" / "octomem.sqlite3").exists()


async def test_two_projects_one_global_memory_as_a_new_user_would(tmp_path: Path) -> None:
    """Two clients in two projects, two server processes, one global memory."""
    global_root = tmp_path / "me"
    alpha, beta = tmp_path / "alpha", tmp_path / "beta"
    alpha.mkdir()
    beta.mkdir()

    def params(project: Path) -> StdioServerParameters:
        return server_params(tmp_path, "--project-root", str(project), "--global-root",
                             str(global_root), OCTOMEM_PIPELINE__EMBEDDER="hashing")

    with anyio.fail_after(180):
        async with Client(params(alpha), read_timeout_seconds=60) as a, \
                Client(params(beta), read_timeout_seconds=60) as b:
            pref = await call(a, "remember", text="The user prefers answers in British English",
                              scope="global", kind="PREFERENCE")
            fact_a = await call(a, "remember", text="The alpha service deploys with make ship",
                                kind="FACT")
            fact_b = await call(b, "remember", text="The beta service deploys with make ship-beta",
                                kind="FACT")
            for client, own, other in ((a, fact_a, fact_b), (b, fact_b, fact_a)):
                english = await call(client, "recall", query="which English does the user prefer")
                assert english["hits"][0]["id"] == pref["id"]
                assert english["hits"][0]["scope"] == "global"
                deploy = await call(client, "recall", query="how does the service deploy")
                ids = {h["id"] for h in deploy["hits"]}
                assert own["id"] in ids and other["id"] not in ids
                assert set(deploy["scopes"]) == {"local", "global"}

            # supersede: the old statement is history, as_of finds it for an earlier date
            old = await call(a, "remember", text="The alpha database is PostgreSQL 15",
                             kind="FACT", event_time="2024-01-10")
            new = await call(a, "remember", text="The alpha database is PostgreSQL 17",
                             kind="FACT", event_time="2025-02-01", supersedes=old["id"])
            assert new["superseded"]["id"] == old["id"] and new["scope"] == "local"
            now = await call(a, "recall", query="alpha database version")
            assert now["hits"][0]["id"] == new["id"]
            assert old["id"] not in {h["id"] for h in now["hits"]}
            then = await call(a, "recall", query="alpha database version", as_of="2024-06-01")
            assert then["hits"][0]["id"] == old["id"] and then["hits"][0]["current"] is False
            assert new["id"] not in {h["id"] for h in then["hits"]}

            # forget by ambiguous text lists both and removes none; then by id
            text = "Run the linter before every commit"
            first = await call(a, "remember", text=text, kind="RULE")
            second = await call(a, "remember", text=text, scope="global", kind="RULE")
            assert second["near_duplicates"][0]["id"] == first["id"]
            listed = await call(a, "forget", text_or_id=text)
            assert listed["forgotten"] is None
            assert {(m["id"], m["scope"]) for m in listed["matches"]} == {
                (first["id"], "local"), (second["id"], "global")}
            gone = await call(a, "forget", text_or_id=first["id"], reason="duplicate of global")
            assert gone["forgotten"]["scope"] == "local"
            rules = await call(a, "recall", query="linter before commit", kinds=["RULE"])
            assert [h["id"] for h in rules["hits"]] == [second["id"]]

            # two handoffs: the second replaces the first
            await call(b, "remember", text="Handoff: beta tests half done", kind="HANDOFF")
            latest = await call(b, "remember", text="Handoff: beta tests done, release next",
                                kind="HANDOFF")
            assert [r["text"] for r in latest["replaced"]] == ["Handoff: beta tests half done"]
            handoffs = await call(b, "recall", query="handoff", kinds=["HANDOFF"])
            assert [h["id"] for h in handoffs["hits"]] == [latest["id"]]

            # the resources render what each project sees
            local_a = (await a.read_resource("octomem://memory/local")).contents[0]
            assert "PostgreSQL 17" in local_a.text and "PostgreSQL 15" not in local_a.text
            assert "make ship-beta" not in local_a.text
            glob_b = (await b.read_resource("octomem://memory/global")).contents[0]
            assert "British English" in glob_b.text
    assert (alpha / ".octomem").is_dir() and (beta / ".octomem").is_dir()


async def test_stdio_lists_tools_at_once_with_the_real_model(tmp_path: Path) -> None:
    """The default fastembed embedder: tools/list must not wait for the model to load."""
    params = server_params(tmp_path)
    with anyio.fail_after(180):
        start = time.perf_counter()
        async with Client(params, read_timeout_seconds=120) as client:
            initialized = time.perf_counter() - start
            tools = (await client.list_tools()).tools
            listed = time.perf_counter() - start
            status = structured(await client.call_tool("status", {}))
            state_at_listing = status["model_state"]
            while status["model_state"] in ("starting", "loading"):
                await anyio.sleep(0.1)
                status = structured(await client.call_tool("status", {}))
            ready = time.perf_counter() - start
            # a store to search: a recall of none runs no arm (a read creates no store, F12)
            structured(await client.call_tool("remember", {"text": "The user prefers tabs"}))
            answer = structured(await client.call_tool("recall", {"query": "anything at all"}))
    print(
        f"\nstdio startup with fastembed: initialize {initialized:.2f} s, tools/list "
        f"{listed:.2f} s, model state then {state_at_listing!r}, model ready at {ready:.2f} s "
        f"(load {status['model_load_seconds']} s)"
    )
    assert {t.name for t in tools} == TOOLS
    assert listed < STARTUP_LIMIT_S
    # a fresh HOME: the model was still being re-quantized when the tools were listed
    assert state_at_listing in ("starting", "loading")
    assert status["arms"]["embedder"] == "fastembed" and status["model_state"] == "ready"
    assert status["semantic_available"] and status["embedder_model"], status
    assert answer["semantic_available"] and answer["arms_unavailable"] == {}


#: A chat between two people: Ben's reply answers Ana's question without its words.
CHAT = [
    ("Ana", "Where did you stay on your trip to Lisbon?"),
    ("Ben", "A tiny guesthouse in Alfama, right under the castle walls."),
    ("Ana", "I baked bread this morning and it came out great."),
    ("Ben", "The dog chewed my running shoes again."),
    ("Ana", "My cousin started a new job at the hospital."),
    ("Ben", "We watched a documentary about whales last night."),
]


async def test_stdio_transcript_reply_with_its_question_and_abstention(tmp_path: Path) -> None:
    """Ingest a transcript, find the reply that answers a question with the question
    beside it, and get an empty answer with its reason for something never said (the real
    MiniLM model: relevance is calibrated on its cosines)."""
    import json

    project = tmp_path / "project"
    project.mkdir()
    chat = project / "trip.jsonl"
    chat.write_text("".join(json.dumps({"session": "1", "speaker": s, "text": t}) + "\n"
                            for s, t in CHAT), encoding="utf-8")
    params = server_params(tmp_path, cwd=project)
    with anyio.fail_after(240):
        async with Client(params, read_timeout_seconds=200) as client:
            await call(client, "ingest", path_or_text=str(chat))
            answer = await call(client, "recall", query="Which guesthouse did Ben stay in?",
                                context=1, top_k=3)
            top = answer["hits"][0]
            assert top["text"].startswith("Ben: A tiny guesthouse")
            assert 0.0 <= top["relevance"] <= 1.0 and top["band"] in ("high", "medium", "low")
            assert [c["text"] for c in top["context"]][0].startswith("Ana: Where did you stay")
            assert answer["abstained"] is None
            never = await call(client, "recall", query="quarterly tax filing deadline for "
                               "the Norwegian subsidiary")
            assert never["hits"] == []
            assert "retrieval.relevance_floor" in never["abstained"]
            assert never.get("best_rejected") is None  # only with explain
            why = await call(client, "recall", query="quarterly tax filing deadline for "
                             "the Norwegian subsidiary", explain=True)
            best = why["best_rejected"]
            assert why["hits"] == [] and best["band"] == "low" and best["relevance"] < 0.033
            assert best["text"] in {f"{s}: {t}" for s, t in CHAT}
            assert best["arms"]["sqlite-vec"]["rank"] >= 1
            assert best["relevance_from"]["cos"] == round(best["arms"]["sqlite-vec"]["score"],
                                                          4)
