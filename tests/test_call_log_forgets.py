"""The call log keeps no text a caller typed, so a forget leaves none behind (trial 21):
a statement that looks like an id, forgotten by its text, and a text sent as `supersedes`
(or as a kind) are kept as their sizes; an id is kept only when the call resolved it."""

from __future__ import annotations

import json
from pathlib import Path

from mcp_stdio import stdio_client
from typer.testing import CliRunner

from octomem.engine.cli import app
from octomem.mcp_server.calllog import summarise

#: A bare hex token: what someone stores, and of an id's form (not the id it gets).
TOKEN = "3f9a1c0e5b7d4e2a9c8b6d4f2e0a1b3c"
VAULT = "Vault root token is s.QUUXSECRET"
TRACES = (TOKEN.encode(), b"QUUXSECRET", b"Vault root")


def _traces(root: Path) -> dict[str, list[str]]:
    """Each file under ``root`` (relative name) holding any of :data:`TRACES`, with them."""
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        hits = [t.decode() for t in TRACES if t in path.read_bytes()]
        if hits:
            found[str(path.relative_to(root))] = hits
    return found


def test_forgotten_texts_leave_no_trace_in_the_call_log(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with stdio_client(tmp_path, project, OCTOMEM_CALL_LOG="1") as mcp:
        token = mcp.ok("remember", text=TOKEN)
        assert token["id"] != TOKEN
        assert mcp.ok("forget", text_or_id=TOKEN)["forgotten"]["id"] == token["id"]
        mcp.ok("remember", text=VAULT, kind="FACT")
        assert "supersedes" in mcp.error("remember", text="Vault root token was rotated",
                                         kind="FACT", supersedes=VAULT)
        assert "kind" in mcp.error("remember", text="Rotated again", kind="Vault root x")
        assert "kinds" in mcp.error("recall", query="vault", kinds=["FACT", VAULT],
                                   as_of=VAULT[:10])
        mcp.ok("forget", text_or_id=VAULT)
        old = mcp.ok("remember", text="The office is in Leeds", kind="FACT")
        new = mcp.ok("remember", text="The office is in York", supersedes=old["id"])
        mcp.ok("forget", text_or_id=new["id"])
        mcp.error("forget", text_or_id=TOKEN)  # an id's form, naming nothing now
    result = CliRunner().invoke(app, ["--data-dir", str(tmp_path / "data"), "--project-root",
                                      str(project), "log", "tail", "--json"])
    assert result.exit_code == 0, result.output
    calls = [json.loads(line)["arguments"] for line in result.stdout.splitlines()]
    assert calls == [
        {"text_chars": 32}, {"text_or_id_chars": 32},
        {"text_chars": 32, "kind": "FACT"},
        {"text_chars": 28, "kind": "FACT", "supersedes_chars": 32},
        {"text_chars": 13, "kind_chars": 12},
        {"query_chars": 5, "kinds_count": 2, "as_of_chars": 10},
        {"text_or_id_chars": 32},
        {"text_chars": 22, "kind": "FACT"},
        {"text_chars": 21, "supersedes": old["id"]},
        {"id": new["id"]},
        {"text_or_id_chars": 32}]
    assert _traces(tmp_path) == {}


def test_only_values_of_their_arguments_form_are_kept() -> None:
    assert summarise("recall", {"scope": "the vault", "per": "document", "kinds": ["FACT"],
                                "since": "2024-01-01T10:00:00Z", "until": "last week",
                                "top_k": "ten", "explain": True}) == {
        "scope_chars": 9, "per": "document", "kinds": ["FACT"],
        "since": "2024-01-01T10:00:00Z", "until_chars": 9, "top_k_chars": 3, "explain": True}
    assert summarise("remember", {"supersedes": TOKEN}, {"superseded": {"id": TOKEN}}) == {
        "supersedes": TOKEN}
    assert summarise("remember", {"supersedes": TOKEN}, {"superseded": None}) == {
        "supersedes_chars": 32}
    assert summarise("forget", {"text_or_id": TOKEN}, {"forgotten": {"id": "0" * 32}}) == {
        "text_or_id_chars": 32}
