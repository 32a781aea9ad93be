"""A hostile MCP caller's arguments (issue 13, items 6 and 7): unknown names and values of
the wrong type are refused in one line naming the argument, and a request holding invalid
Unicode gets a JSON-RPC error instead of silence; against a real server over stdio."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp_stdio import RawServer, stdio_client

pytestmark = pytest.mark.slow


def _one_line(message: str) -> str:
    assert "\n" not in message and "errors.pydantic.dev" not in message, message
    return message


def test_unknown_and_mistyped_arguments_are_refused_naming_them(tmp_path: Path,
                                                                 project: Path) -> None:
    with stdio_client(tmp_path, project) as mcp:
        mcp.ok("remember", text="The deploy script lives in ops/deploy.sh", kind="FACT")
        wrong_kind = _one_line(mcp.error("recall", query="deploy script", kind="TODO"))
        assert "'kind'" in wrong_kind and "kinds" in wrong_kind and "top_k" in wrong_kind
        assert "'id'" in _one_line(mcp.error("remember", text="Stored under my id", id="mine"))
        assert "top_k" in _one_line(mcp.error("recall", query="deploy", top_k=True))
        assert "top_k" in _one_line(mcp.error("recall", query="deploy", top_k="abc"))
        assert "top_k" in _one_line(mcp.error("recall", query="deploy", top_k=2.5))
        assert "explain" in _one_line(mcp.error("recall", query="deploy", explain="yes"))
        assert "include_superseded" in _one_line(
            mcp.error("recall", query="deploy", include_superseded=1))
        assert "tags" in _one_line(mcp.error("remember", text="x y z", tags="ci"))
        assert "text" in _one_line(mcp.error("remember"))
        # nothing of the refused calls was stored
        status = mcp.ok("status")
        assert status["documents"] == 1
        # a list sent as a JSON string (as some clients do) is still read as the list
        tagged = mcp.ok("remember", text="CI runs on self-hosted runners", tags='["ci"]')
        assert tagged["tags"] == ["ci"]


def test_a_lone_surrogate_gets_a_json_rpc_error_and_the_server_goes_on(
        tmp_path: Path, project: Path) -> None:
    server = RawServer(tmp_path, project)
    try:
        server.send_line('{"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": '
                         '{"name": "remember", "arguments": {"text": "bad \\ud800 text"}}}')
        reply = server.receive(timeout=30)
        assert reply is not None, "no reply to a call holding a lone surrogate"
        assert reply["id"] == 41 and "Unicode" in reply["error"]["message"]
        assert "text" in reply["error"]["message"]
        status = server.request("tools/call", {"name": "status", "arguments": {}})
        assert status["result"]["structuredContent"]["documents"] == 0
    finally:
        server.close()


def test_a_batch_and_params_that_are_no_object_get_an_answer(tmp_path: Path,
                                                              project: Path) -> None:
    """Trial 16 F10: both were valid JSON but no JSON-RPC message the SDK reads, and got
    no answer at all (the client waited for its timeout)."""
    server = RawServer(tmp_path, project)
    try:
        server.send_line('[{"jsonrpc": "2.0", "id": 6, "method": "ping"}, '
                         '{"jsonrpc": "2.0", "id": 7, "method": "ping"}]')
        batch = server.receive(timeout=30)
        assert batch is not None, "no reply to a batch"
        assert batch["id"] is None and batch["error"]["code"] == -32600
        assert "batch" in batch["error"]["message"]
        listed = server.request("tools/call", ["recall"])  # type: ignore[arg-type]
        assert listed["id"] == server.next_id and listed["error"] == {
            "code": -32602, "message": "params: must be an object, got an array"}
        # non-object tool arguments are the SDK's to refuse (mcp 2.3.0: an empty "data")
        sdk = server.request("tools/call", {"name": "recall", "arguments": ["x"]})
        assert sdk["error"]["code"] == -32602
        assert server.request("ping", {})["result"] == {}  # and the server goes on
    finally:
        server.close()
