"""An ingest run again after one that stored its documents but was killed before their
vectors were written (here: stored with the semantic arm off, the state such a kill
leaves) embeds those documents' chunks and says so, instead of reporting them unchanged
with nothing embedded. Chunks of other documents are left to ``octomem reindex``. The
CLI runs as a user runs it, on a real SQLite file."""

from __future__ import annotations

from pathlib import Path

from cli_run import octomem


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
