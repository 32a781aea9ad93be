"""Trial 13, F2: ``--supersedes`` / ``remember(supersedes=)`` names a statement. An ingested
file, an ingested text or a conversation turn (ids ``recall`` hands out beside statements')
is refused in one line naming what the id is, and nothing is written: superseding a file
made its later revisions be born superseded, hidden from every search."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from cli_run import octomem
from mcp_stdio import stdio_client
from ui_support import running_view

from octomem.engine.errors import InvalidQueryError
from octomem.engine.memory.facade import open_memory


def _hit_id(project: Path, query: str) -> str:
    return str(octomem(project, "search", query, "--json").json()["hits"][0]["id"])


def _export(project: Path) -> str:
    return "".join(octomem(project, "export", "--scope", "local", "-").out.splitlines(True)[1:])


def test_the_cli_refuses_a_file_a_text_and_a_turn_and_writes_nothing(project: Path) -> None:
    (project / "z.md").write_text("Doc about zebras crossing.\n")
    (project / "chat.jsonl").write_text(
        '{"speaker":"Ana","text":"Let us plan the Lisbon trip."}\n'
        '{"speaker":"Ben","text":"We land at 14:05 on Friday."}\n')
    octomem(project, "ingest", "z.md")
    octomem(project, "ingest", "chat.jsonl")
    memory = open_memory(overrides={"pipeline": {"embedder": "hashing"}}, project_root=project)
    try:
        memory.ingest("Giraffes sleep standing up, ingested as text.")
    finally:
        memory.close()
    file_id = _hit_id(project, "zebras crossing")
    assert file_id.startswith("file:")
    text_id = _hit_id(project, "giraffes sleep standing")
    before = _export(project)

    ran = octomem(project, "add", "zebras note replacement", "--supersedes", file_id, ok=False)
    assert ran.code != 0 and ran.out == ""
    assert ran.err == (f"error: --supersedes: {file_id!r} is an ingested file "
                       f"({(project / 'z.md').resolve()}), not a statement: forget it, or "
                       "edit the file and ingest it again; nothing was stored; see "
                       "`octomem add --help`\n"), ran.err
    ran = octomem(project, "add", "Supersede a turn", "--supersedes", "chat:0", ok=False)
    assert ran.err == (f"error: --supersedes: 'chat:0' is a conversation turn "
                       f"({(project / 'chat.jsonl').resolve()}), not a statement: forget it, "
                       "or edit the transcript and ingest it again; nothing was stored; see "
                       "`octomem add --help`\n")
    memory = open_memory(overrides={"pipeline": {"embedder": "hashing"}}, project_root=project)
    try:
        with pytest.raises(InvalidQueryError) as refused:
            memory.remember("Giraffes lie down", supersedes=text_id)
    finally:
        memory.close()
    assert str(refused.value) == (f"supersedes: {text_id!r} is an ingested document, not a "
                                  "statement: forget it, or ingest its new text; nothing was "
                                  "stored")
    assert _export(project) == before  # nothing written

    # the file's next revision is current and found, as it always should have been
    (project / "z.md").write_text("Doc about zebras crossing the river at dawn.\n")
    octomem(project, "ingest", "z.md")
    hits = octomem(project, "search", "zebras river dawn", "--json").json()["hits"]
    assert hits[0]["id"] == file_id and "river at dawn" in hits[0]["text"]

    # a statement is still superseded as before
    old = octomem(project, "add", "The API rate limit is 100 per minute", "--json").json()
    octomem(project, "add", "The API rate limit is 500 per minute", "--supersedes",
            old["id"])
    helped = " ".join(octomem(project, "add", "--help").out.replace("│", " ").split())
    assert "not an ingested file or conversation turn" in helped, helped


@pytest.mark.slow
def test_mcp_remember_refuses_a_recalled_turn(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "chat.jsonl").write_text(
        '{"speaker":"Ana","text":"The kayak rental opens at nine."}\n')
    with stdio_client(tmp_path, project) as mcp:
        mcp.ok("ingest", path_or_text=str(project / "chat.jsonl"))
        hit = mcp.ok("recall", query="kayak rental")["hits"][0]
        assert hit["id"] == "chat:0"
        message = mcp.error("remember", text="Kayaks from ten", supersedes=hit["id"])
        assert "supersedes: 'chat:0' is a conversation turn (" in message, message
        assert message.endswith("not a statement: forget it, or edit the transcript and "
                                "ingest it again; nothing was stored"), message
        assert mcp.ok("recall", query="kayaks from ten")["hits"][0]["id"] == "chat:0"


def test_the_view_offers_no_replace_form_for_ingested_content(tmp_path: Path) -> None:
    with running_view(tmp_path, allow_writes=True) as view:
        agent = view.agent()
        try:
            agent.ingest("Okapis are shy forest animals, ingested as text.")
            doc = agent.recall("okapis shy").hits[0].chunk.document_id
            fact = agent.remember("Okapis eat leaves").document.id
        finally:
            agent.close()
        with httpx.Client(base_url=view.url, timeout=30) as http:
            assert "replace-form" not in http.get(f"/item/{doc}").text
            assert "forget-form" in http.get(f"/item/{doc}").text
            assert "replace-form" in http.get(f"/item/{fact}").text
