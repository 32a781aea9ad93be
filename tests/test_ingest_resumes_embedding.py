"""An ingest run again after one that stored its documents but was killed before their
vectors were written (here: stored with the semantic arm off, the state such a kill
leaves) embeds those documents' chunks and says so, instead of reporting them unchanged
with nothing embedded. Chunks of other documents are left to ``octomem reindex``. The
CLI runs as a user runs it, and the MCP tool through a real stdio client, on a real
SQLite file."""

from __future__ import annotations

from pathlib import Path

from cli_run import octomem
from mcp_stdio import stdio_client

from octomem.engine.memory.facade import Memory
from octomem.engine.types import Document


def test_a_rerun_ingest_embeds_the_chunks_an_earlier_one_left(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("The billing service uses PostgreSQL 16.\n")
    (folder / "b.md").write_text("The search service runs on two nodes.\n")
    (tmp_path / "other.md").write_text("The cache expires after ten minutes.\n")
    first = octomem(tmp_path, "--set", "pipeline.semantic=", "ingest", "notes", "other.md")
    assert "0 embedded" in first.out
    again = octomem(tmp_path, "ingest", "notes")
    assert again.out.splitlines() == [
        "added 0, replaced 0, unchanged 2 documents; 0 chunks indexed, 2 embedded "
        "(2 left without a vector by an earlier ingest)"]
    assert again.err.strip().splitlines()[-1] == (
        "warning: 1 chunk of the local scope has no vector yet (found by their words "
        "only): `octomem reindex` embeds them")  # other.md's: not part of this ingest
    third = octomem(tmp_path, "ingest", "notes")
    assert third.out.splitlines() == [
        "added 0, replaced 0, unchanged 2 documents; 0 chunks indexed, 0 embedded"]
    octomem(tmp_path, "ingest", "other.md")
    assert "no vector yet" not in octomem(tmp_path, "search", "billing").err


def test_the_mcp_ingest_tool_embeds_them_too(tmp_path: Path) -> None:
    """The same through the MCP ``ingest`` tool, a real client over stdio: the first
    server stores with the semantic arm off, the second ingests the folder again."""
    project = tmp_path / "project"
    (project / "notes").mkdir(parents=True)
    (project / "notes" / "a.md").write_text("The billing service uses PostgreSQL 16.\n")
    (project / "notes" / "b.md").write_text("The search service runs on two nodes.\n")
    (project / "other.md").write_text("The cache expires after ten minutes.\n")
    with stdio_client(tmp_path, project, OCTOMEM_PIPELINE__SEMANTIC="") as mcp:
        for source in ("notes", "other.md"):
            assert mcp.ok("ingest", path_or_text=source)["embedded"] == 0
    with stdio_client(tmp_path, project) as mcp:
        again = mcp.ok("ingest", path_or_text="notes")
        assert (len(again["unchanged"]), again["chunks"]) == (2, 0)
        assert (again["embedded"], again["embedded_earlier"]) == (2, 2)
        answer = mcp.ok("recall", query="billing service PostgreSQL")
        assert answer["chunks_without_vector"] == 1  # other.md's: not part of this ingest
        assert "sqlite-vec" in answer["arms_ran"] and answer["hits"][0]["text"].startswith(
            "The billing service")
        third = mcp.ok("ingest", path_or_text="notes")
        assert (third["embedded"], third["embedded_earlier"]) == (0, 0)


def test_a_file_found_twice_in_one_ingest_is_embedded_once(tmp_path: Path) -> None:
    """A symlink to a file beside it (one document: its id is the resolved path) is no
    chunk "left without a vector by an earlier ingest" (trial 10): the file's chunk was
    counted twice, once as stored and once as its unchanged second sighting's."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "deploy.md").write_text("# Deploy guide\n\nTo deploy, run `make release`.\n")
    (folder / "link.md").symlink_to("deploy.md")
    (folder / "other.md").write_text("The cache expires after ten minutes.\n")
    first = octomem(tmp_path, "ingest", "docs")
    assert first.out.splitlines() == [  # link.md: deploy.md's file, read once
        "added 2, replaced 0, unchanged 0 documents; 2 chunks indexed, 2 embedded"]
    (folder / "deploy.md").write_text("# Deploy guide\n\nTo deploy, run `make ship`.\n")
    again = octomem(tmp_path, "ingest", "docs")
    assert again.out.splitlines() == [
        "added 0, replaced 1, unchanged 1 document; 1 chunk indexed, 1 embedded"]
    status = octomem(tmp_path, "status", "--json").json()
    assert status["scopes"]["local"]["chunks_without_vector"] == 0


def test_a_document_added_twice_in_one_add_resumes_nothing(memory: Memory) -> None:
    """The same document twice in one :meth:`Pipeline.add` (an API caller's list): stored
    once, then found unchanged; its chunk is this add's, embedded once, not "left
    without a vector by an earlier ingest"."""
    pipeline = memory.scopes.require("local", create=True)
    doc = Document(text="The staging server is called heron.", id="file:deploy", kind="DOC")
    report = pipeline.add([doc, doc], embed=True)
    assert (len(report.added), len(report.unchanged)) == (1, 1)
    assert report.resumed == [] and report.embedded == 1
    assert pipeline.arms.semantic.missing_count() == 0
