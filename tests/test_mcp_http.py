"""MCP over streamable HTTP (``serve --http``), driven by the ``mcp`` SDK's own HTTP client
against a real server process: several clients at once, the bearer token, the Host check."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_stdio import structured
from served import Served

from octomem.engine.errors import OctomemError
from octomem.mcp_server.http import BearerTokenGuard, parse_address, resolve_token

pytestmark = [pytest.mark.slow]

URL_LINE = r"MCP over streamable HTTP at (http://\S+/mcp)"
TOOLS = {"remember", "recall", "forget", "ingest", "status"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def loopback(tmp_path: Path) -> Iterator[tuple[Served, str]]:
    served = Served(tmp_path, "--http", "127.0.0.1:0")
    try:
        yield served, served.wait_for(URL_LINE).group(1)
    finally:
        served.stop()


@pytest.mark.anyio
async def test_two_clients_write_and_recall_at_once(loopback: tuple[Served, str]) -> None:
    served, url = loopback
    stored: dict[str, str] = {}

    async def agent(name: str, fact: str) -> None:
        async with Client(url, read_timeout_seconds=120) as client:
            assert {t.name for t in (await client.list_tools()).tools} == TOOLS
            for i in range(3):
                out = structured(await client.call_tool(
                    "remember", {"text": f"{fact} (note {i})", "kind": "FACT"}))
                stored[f"{name}{i}"] = out["id"]
            answer = structured(await client.call_tool("recall", {"query": fact, "top_k": 3}))
            assert {h["id"] for h in answer["hits"]} == {stored[f"{name}{i}"] for i in range(3)}

    with anyio.fail_after(240):
        async with anyio.create_task_group() as group:
            group.start_soon(agent, "a", "The alpha build uses Bazel remote caching")
            group.start_soon(agent, "b", "The billing service retries webhooks nightly")
        # a third client sees both agents' writes, and the resources as over stdio
        async with Client(url, read_timeout_seconds=120) as client:
            answer = structured(await client.call_tool("recall", {"query": "alpha Bazel"}))
            assert answer["hits"][0]["id"] in {stored[f"a{i}"] for i in range(3)}
            status = structured(await client.call_tool("status", {}))
            assert status["scopes"]["local"]["documents"] == 6
            page = await client.read_resource("octomem://memory/local")
            text = page.contents[0].text  # type: ignore[union-attr]
            assert "billing service retries webhooks" in text
    assert served.process.poll() is None


@pytest.mark.anyio
async def test_a_page_naming_another_host_is_refused(loopback: tuple[Served, str]) -> None:
    _, url = loopback
    async with httpx2.AsyncClient() as http:
        rebound = await http.post(url, json={}, headers={"Host": "evil.example:8765"})
        foreign = await http.post(url, json={}, headers={"Origin": "http://evil.example"})
    assert rebound.status_code == 421
    assert foreign.status_code == 403


@pytest.mark.anyio
async def test_non_loopback_bind_refuses_every_request_without_the_token(
    tmp_path: Path,
) -> None:
    """Bound on every interface (0.0.0.0) without OCTOMEM_HTTP_TOKEN: a token is generated
    and printed; reached through 127.0.0.1 (no traffic leaves the machine)."""
    served = Served(tmp_path, "--http", "0.0.0.0:0")
    try:
        token = served.wait_for(r"Authorization: Bearer (\S+?)'").group(1)
        port = int(served.wait_for(URL_LINE).group(1).rsplit(":", 1)[1].split("/")[0])
        url = f"http://127.0.0.1:{port}/mcp"
        async with httpx2.AsyncClient() as http:
            for method in ("GET", "POST", "DELETE", "OPTIONS"):
                for path in ("/mcp", "/", "/metrics"):
                    bare = await http.request(method, f"http://127.0.0.1:{port}{path}")
                    assert bare.status_code == 401, (method, path, bare.status_code)
                    assert bare.headers["www-authenticate"].startswith("Bearer")
            wrong = await http.post(url, json={}, headers={"Authorization": "Bearer nope"})
            assert wrong.status_code == 401
        with pytest.raises(Exception):  # noqa: B017 - the SDK wraps the 401 in a task group
            with anyio.fail_after(60):
                async with Client(url) as client:
                    await client.call_tool("status", {})
        with anyio.fail_after(120):
            async with create_mcp_http_client(
                    headers={"Authorization": f"Bearer {token}"}) as http, \
                    Client(streamable_http_client(url, http_client=http)) as client:
                out = structured(await client.call_tool(
                    "remember", {"text": "Reached with the printed token", "kind": "FACT"}))
                assert out["scope"] == "local"
    finally:
        served.stop()


@pytest.mark.anyio
async def test_a_configured_token_guards_a_loopback_bind_too(tmp_path: Path) -> None:
    served = Served(tmp_path, "--http", "127.0.0.1:0", OCTOMEM_HTTP_TOKEN="tok-123")
    try:
        url = served.wait_for(URL_LINE).group(1)
        assert not any("Authorization: Bearer" in line for line in served.stderr)
        async with httpx2.AsyncClient() as http:
            assert (await http.post(url, json={})).status_code == 401
            wrong = await http.post(url, json={}, headers={"Authorization": "Bearer nope"})
            assert wrong.json()["error_description"] == "the bearer token is wrong"
            # trial 12 M5: the scheme is case-insensitive (RFC 7235 section 2.1)
            for scheme in ("bearer", "BEARER"):
                passed = await http.post(url, json={},
                                         headers={"Authorization": f"{scheme} tok-123"})
                assert passed.status_code != 401, (scheme, passed.text)
        with anyio.fail_after(120):
            async with create_mcp_http_client(
                    headers={"Authorization": "Bearer tok-123"}) as http, \
                    Client(streamable_http_client(url, http_client=http)) as client:
                assert structured(await client.call_tool("status", {}))["documents"] == 0
    finally:
        served.stop()


def test_addresses_and_tokens() -> None:
    assert parse_address("127.0.0.1:8765", "--http").loopback
    assert parse_address("[::1]:0", "--http").loopback
    assert parse_address("localhost:1", "--http").loopback
    assert not parse_address("0.0.0.0:8765", "--http").loopback
    assert not parse_address("192.168.1.5:80", "--http").loopback
    for bad in ("8765", "127.0.0.1", "127.0.0.1:70000", "example.com:80", ":80"):
        with pytest.raises(ValueError, match="--http"):
            parse_address(bad, "--http")
    assert resolve_token(parse_address("127.0.0.1:1", "x"), None) == (None, False)
    assert resolve_token(parse_address("127.0.0.1:1", "x"), "t") == ("t", False)
    token, generated = resolve_token(parse_address("0.0.0.0:1", "x"), None)
    assert generated and token is not None and len(token) >= 40
    long = "x" * 16
    assert resolve_token(parse_address("0.0.0.0:1", "x"), long) == (long, False)
    # trial 12 M6: a LAN server's token is as long as ui_token's; every token is ASCII
    with pytest.raises(OctomemError, match="at least 16 characters long on 0.0.0.0"):
        resolve_token(parse_address("0.0.0.0:1", "x"), "a")
    with pytest.raises(OctomemError, match="printable ASCII"):
        resolve_token(parse_address("127.0.0.1:1", "x"), "ünïcode-tøken-123456")


@pytest.mark.anyio
async def test_guard_passes_lifespan_events_through() -> None:
    seen: list[str] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.append(scope["type"])

    await BearerTokenGuard(app, "t")({"type": "lifespan"}, None, None)
    assert seen == ["lifespan"]
